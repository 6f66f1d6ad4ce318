import base from './jest.config.js';

/**
 * The suites that run the MySQL store on a MariaDB server (`npm run test:mariadb`). npm cannot
 * start MariaDB, so `npm test` runs none of them and `.ci/run` runs these against the machine's
 * server: MARIADB_URL, or mysql://root@127.0.0.1:3306/test. Without a server each suite fails with
 * one sentence that says how to start one; none skips. No PostgreSQL is started for them.
 * @type {import('jest').Config}
 */
export default {
  ...base,
  testEnvironment: 'node',
  globalSetup: undefined,
  globalTeardown: undefined,
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.mariadb.ts'],
  // Two workers share the one server; each suite's tables carry a prefix of their own.
  maxWorkers: 2,
};
