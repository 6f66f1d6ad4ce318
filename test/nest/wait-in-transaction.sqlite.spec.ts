import { describe } from '@jest/globals';
import { tempSqlite } from './support.js';
import { waitInTransactionCases } from './wait-in-transaction.cases.js';

describe('waitFor inside a transaction on SQLite', () => {
  waitInTransactionCases(async () => {
    const sqlite = tempSqlite();
    return {
      typeorm: async () => ({ type: 'better-sqlite3', database: sqlite.database }),
      scheduler: {},
      cleanup: async () => sqlite.cleanup(),
    };
  });
});
