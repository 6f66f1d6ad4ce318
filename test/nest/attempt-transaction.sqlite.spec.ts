import { describe } from '@jest/globals';
import { SqliteJobStore } from '../../lib/index.js';
import { attemptTransactionCases } from './attempt-transaction.cases.js';
import { tempSqlite } from './support.js';

describe('attempt transactions on SQLite', () => {
  attemptTransactionCases(async () => {
    const sqlite = tempSqlite();
    return {
      typeorm: async () => ({ type: 'better-sqlite3', database: sqlite.database }),
      scheduler: {},
      concurrentWrites: false,
      expireLease: async (dataSource, store, jobId) => {
        const { jobs } = (store as SqliteJobStore).naming;
        await dataSource.query(`UPDATE ${jobs} SET leased_until = CAST(unixepoch('subsec') * 1000 AS INTEGER) - 1000 WHERE id = ?`, [jobId]);
      },
      lapseLeaseNow: async (dataSource, store, jobId) => {
        const { jobs } = (store as SqliteJobStore).naming;
        await dataSource.query(`UPDATE ${jobs} SET leased_until = CAST(unixepoch('subsec') * 1000 AS INTEGER) WHERE id = ?`, [jobId]);
      },
      cleanup: async () => sqlite.cleanup(),
    };
  });
});
