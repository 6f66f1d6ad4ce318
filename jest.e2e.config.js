import base from './jest.config.js';

/**
 * The browser tests of the dashboard (`npm run test:e2e`): a real Chromium drives the built sample
 * app. They live in their own root, so `npm test` runs none of them and needs no browser. They use
 * SQLite, and one file MariaDB (MARIADB_URL, or the machine's server as in `npm run test:mariadb`),
 * so they need no PostgreSQL: no global setup.
 * @type {import('jest').Config}
 */
export default {
  testEnvironment: base.testEnvironment,
  extensionsToTreatAsEsm: base.extensionsToTreatAsEsm,
  moduleNameMapper: base.moduleNameMapper,
  transform: base.transform,
  roots: ['<rootDir>/test-e2e'],
  testMatch: ['**/*.e2e.ts'],
  // A page load, a confirmation and a live refresh (every 5 s) per step, on a loaded 2-core machine.
  testTimeout: 180_000,
};
