// A private MariaDB server for the chaos run: the machine's own mariadbd on a fresh data directory
// and a free port, so that the run can restart it (the shared server on 3306 carries other work,
// and on Debian without systemd `service mariadb restart` cannot stop it). Like the embedded
// PostgreSQL of the PostgreSQL mode, it lives and dies with the run.
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const DIRS = ['/usr/sbin', '/usr/bin', '/usr/local/sbin', '/usr/local/bin', '/usr/local/mysql/bin', '/opt/homebrew/bin'];

function which(names) {
  const dirs = [...(process.env.PATH ?? '').split(':').filter(Boolean), ...DIRS];
  for (const name of names) for (const dir of dirs) if (existsSync(join(dir, name))) return join(dir, name);
  return null;
}

/** The server and installer binaries, or null when this machine has none. */
export function mariadbBinaries() {
  const server = which(['mariadbd', 'mysqld']);
  const install = which(['mariadb-install-db', 'mysql_install_db']);
  return server && install ? { server, install } : null;
}

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
 * Initializes a data directory under `dir` and starts a server on it; resolves with its URL (user
 * root, no password), `restart()` and `stop()`. `restart({ immediate, downMs })` stops the server,
 * with a clean shutdown (SIGTERM) or, `immediate`, with SIGKILL so that InnoDB recovers from its
 * redo log, and starts it again on the same directory and port after `downMs`.
 */
export async function startPrivateMariadb(dir, binaries) {
  const data = join(dir, 'data');
  mkdirSync(dir, { recursive: true });
  const asRoot = process.getuid?.() === 0;
  const user = asRoot ? 'root' : (process.env.USER ?? 'nobody');
  await promisify(execFile)(binaries.install, ['--no-defaults', `--datadir=${data}`, `--user=${user}`, '--auth-root-authentication-method=normal', '--skip-test-db'], {
    timeout: 120_000,
  });
  const port = await freePort();
  const args = [
    '--no-defaults',
    `--datadir=${data}`,
    `--port=${port}`,
    '--bind-address=127.0.0.1',
    `--socket=${join(dir, 'mysqld.sock')}`,
    `--pid-file=${join(dir, 'mysqld.pid')}`,
    `--log-error=${join(dir, 'error.log')}`,
    '--skip-name-resolve',
    '--character-set-server=utf8mb4',
    '--collation-server=utf8mb4_general_ci',
    // Every process holds a DataSource pool and the store's own; killed and paused workers keep theirs a while.
    '--max-connections=500',
    ...(asRoot ? ['--user=root'] : []),
  ];
  let child = null;
  const start = async () => {
    child = spawn(binaries.server, args, { stdio: 'ignore' });
    const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    child.exited = exited;
    const deadline = Date.now() + 60_000;
    for (;;) {
      const early = await Promise.race([exited, sleep(100).then(() => null)]);
      if (early) throw new Error(`mariadbd exited while starting (${JSON.stringify(early)}); see ${join(dir, 'error.log')}`);
      try {
        const connection = await mysql.createConnection({ host: '127.0.0.1', port, user: 'root' });
        await connection.end();
        return;
      } catch (error) {
        if (Date.now() > deadline) throw new Error(`mariadbd did not answer within 60 s (${error.code ?? error.message}); see ${join(dir, 'error.log')}`);
      }
    }
  };
  const halt = async (signal) => {
    const current = child;
    if (!current || current.exitCode !== null || current.signalCode !== null) return;
    current.kill(signal);
    const timer = setTimeout(() => current.kill('SIGKILL'), 60_000);
    await current.exited;
    clearTimeout(timer);
  };
  await start();
  return {
    url: `mysql://root@127.0.0.1:${port}`,
    port,
    async restart({ immediate = false, downMs = 0 } = {}) {
      await halt(immediate ? 'SIGKILL' : 'SIGTERM');
      await sleep(downMs);
      await start();
    },
    stop: () => halt('SIGTERM'),
    /** For an abort: no waiting. */
    kill: () => child?.kill('SIGKILL'),
  };
}
