// Gives every Postgres test a server. With DATABASE_URL set, tests use that server as it is, and
// jest runs one worker (jest.config.js). Without it, one embedded PostgreSQL (from npm) starts here
// per jest worker, for the whole run, and stops in global-teardown.mjs. Each worker runs its suites
// on a server of its own (test/support/environment.mjs picks it): observer delivery and history
// reads stop at the oldest transaction open anywhere in a cluster, so two workers on one server
// would hold each other's history tests back. The URLs reach the workers through the environment.
import { EmbeddedPostgresAccessError } from '../../scripts/embedded-postgres-access.mjs';
import { startEmbeddedPostgres } from '../../scripts/embedded-postgres.mjs';

export default async function globalSetup(globalConfig) {
  if (process.env.DATABASE_URL) return;
  const servers = [];
  globalThis.__EMBEDDED_POSTGRES__ = servers;
  // One after another: each picks a free port, which stays free only until a server binds it.
  for (let worker = 1; worker <= Math.max(1, globalConfig.maxWorkers); worker++) {
    const server = await startEmbeddedPostgres('scheduler_test', {
      onError: (message) => process.stderr.write(`[embedded-postgres] ${message}\n`),
    }).catch((error) => {
      // The sentence says what to do; a stack trace would only bury it.
      if (error instanceof EmbeddedPostgresAccessError) error.stack = `${error.name}: ${error.message}`;
      throw error;
    });
    servers.push(server);
    process.env[`DURABLE_SCHEDULER_TEST_DATABASE_URL_${worker}`] = server.url;
  }
  process.env.DATABASE_URL = servers[0].url;
  process.env.DURABLE_SCHEDULER_EMBEDDED_PG = '1';
}
