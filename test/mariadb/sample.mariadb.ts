import { describe } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { sampleCases } from '../sample/sample.cases.js';
import { mariadbUrl, openMariadbDataSource } from '../support/mariadb.js';

describe('the sample app on MariaDB (DATABASE_URL=mariadb://…)', () => {
  sampleCases(async () => {
    // A database of its own: the sample creates its tables, and the scheduler's, in the URL's database.
    const name = `sample_${randomBytes(4).toString('hex')}`;
    const admin = await openMariadbDataSource({ poolSize: 1 });
    await admin.query(`CREATE DATABASE \`${name}\``);
    const url = new URL(mariadbUrl());
    url.pathname = `/${name}`;
    const conn = url.toString().replace(/^[a-z]+:/, 'mariadb:');
    return {
      env: { DATABASE_URL: conn },
      conn,
      cleanup: async () => {
        await admin.query(`DROP DATABASE IF EXISTS \`${name}\``);
        await admin.destroy();
      },
    };
  });
});
