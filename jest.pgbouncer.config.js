import base from './jest.config.js';

/**
 * The suites that run the PostgreSQL store through a real PgBouncer in transaction mode
 * (`npm run test:pgbouncer`): each starts its own from Debian's `pgbouncer` package, which npm
 * cannot install, so `npm test` runs none of them and `.ci/run` installs the package and runs
 * these. The server behind PgBouncer is DATABASE_URL's, or the embedded one global setup starts.
 * @type {import('jest').Config}
 */
export default {
  ...base,
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.pgbouncer.ts'],
  // One worker: every suite starts a PgBouncer of its own in front of one server.
  maxWorkers: 1,
};
