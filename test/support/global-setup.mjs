// Gives every Postgres test a server. With DATABASE_URL set, tests use that server as it is.
// Without it, one embedded PostgreSQL (from npm) starts here for the whole run and stops in
// global-teardown.mjs; the URL reaches the test workers through the environment.
import { EmbeddedPostgresAccessError } from '../../scripts/embedded-postgres-access.mjs';
import { startEmbeddedPostgres } from '../../scripts/embedded-postgres.mjs';

export default async function globalSetup() {
  if (process.env.DATABASE_URL) return;
  const server = await startEmbeddedPostgres('scheduler_test', {
    onError: (message) => process.stderr.write(`[embedded-postgres] ${message}\n`),
  }).catch((error) => {
    // The sentence says what to do; a stack trace would only bury it.
    if (error instanceof EmbeddedPostgresAccessError) error.stack = `${error.name}: ${error.message}`;
    throw error;
  });
  globalThis.__EMBEDDED_POSTGRES__ = server;
  process.env.DATABASE_URL = server.url;
  process.env.DURABLE_SCHEDULER_EMBEDDED_PG = '1';
}
