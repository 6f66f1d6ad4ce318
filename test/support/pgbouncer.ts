import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A real PgBouncer (Debian's package, 1.18 in CI) in front of the test server, in transaction mode,
 * started by the suite that needs it: `npm run test:pgbouncer` (jest.pgbouncer.config.js). It runs
 * as `nobody` when the tests run as root, since PgBouncer refuses root, and keeps nothing on disk
 * but its settings, in a temp folder removed at stop.
 */
export interface PgBouncer {
  /** Through PgBouncer, to the test server's database. */
  readonly url: string;
  stop(): Promise<void>;
}

const BINARIES = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'];

function binary(): string {
  const found = BINARIES.find((path) => existsSync(path)) ?? (spawnSync('which', ['pgbouncer']).stdout?.toString().trim() || undefined);
  if (!found) throw new Error('pgbouncer is not installed: run apt-get install pgbouncer (.ci/run installs it when it is missing).');
  return found;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once something accepts connections on the port, or rejects when `child` exits first. */
async function listening(port: number, child: ChildProcess, output: () => string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited with ${child.exitCode} before it listened: ${output()}`);
    const up = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => (socket.end(), resolve(true)));
      socket.on('error', () => resolve(false));
    });
    if (up) return;
    if (attempt > 500) throw new Error(`pgbouncer did not listen on ${port}: ${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const quoted = (value: string, what: string) => {
  if (/['\s\\]/.test(value)) throw new Error(`The test server's ${what} holds a quote, space or backslash, which this harness does not write into pgbouncer.ini.`);
  return value;
};

/**
 * Starts PgBouncer in transaction mode in front of `serverUrl`, with `poolSize` server connections;
 * with `idleTransactionTimeoutS`, it closes a client that leaves a transaction idle that long.
 */
export async function startPgBouncer(
  serverUrl: string,
  { poolSize = 20, idleTransactionTimeoutS = 0 }: { poolSize?: number; idleTransactionTimeoutS?: number } = {},
): Promise<PgBouncer> {
  const server = new URL(serverUrl);
  const database = quoted(decodeURIComponent(server.pathname.slice(1)), 'database name');
  const user = quoted(decodeURIComponent(server.username), 'user');
  const password = server.password ? ` password=${quoted(decodeURIComponent(server.password), 'password')}` : '';
  const dir = mkdtempSync(join(tmpdir(), 'durable-scheduler-pgbouncer-'));
  chmodSync(dir, 0o755);
  const port = await freePort();
  const ini = join(dir, 'pgbouncer.ini');
  writeFileSync(
    ini,
    [
      '[databases]',
      `${database} = host=${server.hostname} port=${server.port || 5432} dbname=${database} user=${user}${password}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      `default_pool_size = ${poolSize}`,
      `idle_transaction_timeout = ${idleTransactionTimeoutS}`,
      'max_client_conn = 1000',
      'ignore_startup_parameters = extra_float_digits',
      'logfile =',
      'pidfile =',
      '',
    ].join('\n'),
    { mode: 0o644 },
  );
  writeFileSync(join(dir, 'users.txt'), `"${user}" ""\n`, { mode: 0o644 });
  const asRoot = process.getuid?.() === 0;
  const child = spawn(binary(), [...(asRoot ? ['-u', 'nobody'] : []), ini], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  try {
    await listening(port, child, () => output);
  } catch (error) {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    url: `postgres://${encodeURIComponent(user)}@127.0.0.1:${port}/${encodeURIComponent(database)}`,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
