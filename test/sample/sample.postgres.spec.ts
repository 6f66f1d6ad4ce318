import { describe } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { databaseUrl, openPostgresDataSource } from '../support/postgres.js';
import { sampleCases } from './sample.cases.js';

describe('the sample app on PostgreSQL (DATABASE_URL set)', () => {
  sampleCases(async () => {
    // A database of its own: the sample creates its tables in the default schemas.
    const name = `sample_${randomBytes(4).toString('hex')}`;
    const admin = await openPostgresDataSource(1);
    await admin.query(`CREATE DATABASE "${name}"`);
    const url = new URL(databaseUrl());
    url.pathname = `/${name}`;
    return {
      env: { DATABASE_URL: url.toString() },
      conn: url.toString(),
      cleanup: async () => {
        await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
        await admin.destroy();
      },
    };
  });
});
