// A cell's plumbing: a fresh database on the shared server, worker processes, and the server's
// counters before and after (commits and dead tuples are per database; WAL bytes are server-wide).
// A system on Redis gets a Redis cell of the same shape instead (peers/redis-cell.mjs).
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { postgresCpuMs } from '../support.mjs';
import { RedisServer } from './redis-cell.mjs';

export const now = () => performance.timeOrigin + performance.now();
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const WORKER = new URL('./worker-process.mjs', import.meta.url).pathname;

export function payload(k) {
  return { k, pad: 'x'.repeat(84) }; // ~100 bytes of JSON
}

export class Server {
  constructor(url) {
    this.url = url;
    this.admin = new pg.Pool({ connectionString: url, max: 2 }).on('error', () => {});
  }

  async version() {
    const { rows } = await this.admin.query('SHOW server_version');
    return rows[0].server_version;
  }

  /** The server settings a reader needs to judge the figures: vacuum above all (the soak measures it). */
  async settings() {
    const { rows } = await this.admin.query(
      `SELECT name, setting FROM pg_settings WHERE name IN ('autovacuum', 'autovacuum_naptime', 'synchronous_commit', 'fsync', 'shared_buffers', 'max_wal_size') ORDER BY name`,
    );
    return Object.fromEntries(rows.map((r) => [r.name, r.setting]));
  }

  urlOf(database) {
    const u = new URL(this.url);
    u.pathname = `/${database}`;
    return u.toString();
  }

  /**
   * CREATE DATABASE for one cell; `drop()` waits for its connections to go, then drops it. With
   * BENCH_DATABASE set, every cell uses that one name (dropped first if a cell left it behind), for
   * a shared server where a bench may only use the databases it was given: cells run one at a time.
   */
  /** The Redis server, connected on first use: a run without Redis cells never needs one. */
  get redis() {
    this._redis ??= new RedisServer();
    return this._redis;
  }

  async database(system) {
    if (system.backend === 'redis') return this.redis.database(system);
    const fixed = process.env.BENCH_DATABASE;
    if (fixed && !/^[a-z_][a-z0-9_]*$/.test(fixed)) throw new Error(`BENCH_DATABASE must be a plain lower-case name; got ${fixed}`);
    const name = fixed ?? `bench_${randomBytes(4).toString('hex')}`;
    if (fixed) {
      await this.admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, [name]);
      await this.admin.query(`DROP DATABASE IF EXISTS ${name}`);
    }
    await this.admin.query(`CREATE DATABASE ${name}`);
    const url = this.urlOf(name);
    await system.install(url);
    const pool = () => new pg.Pool({ connectionString: url, max: 1 }).on('error', () => {});
    let probe = pool();
    let polls = 0;
    const cell = {
      name,
      url,
      remaining: async () => {
        polls += 1;
        return (await probe.query(system.remainingSql)).rows[0].n;
      },
      polls: () => polls,
      analyze: async () => {
        await probe.query('ANALYZE');
      },
      /** Closes the probe and waits for every session to end, so each backend has flushed its counters. */
      settle: async () => {
        await probe.end();
        probe = pool();
        return this.idle(name, 15_000, 0);
      },
      idle: (capMs, allowed) => this.idle(name, capMs, allowed),
      serverCpuMs: async () => postgresCpuMs(),
      counters: () => this.counters(name),
      tables: async () => {
        const { rows } = await probe.query(`SELECT coalesce(sum(n_dead_tup), 0)::bigint AS dead, coalesce(sum(pg_total_relation_size(relid)), 0)::bigint AS bytes
          FROM pg_stat_user_tables`);
        return { dead: Number(rows[0].dead), bytes: Number(rows[0].bytes) };
      },
      drop: async () => {
        await probe.end();
        await this.idle(name, 15_000, 0);
        await this.admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, [name]);
        await this.idle(name, 5_000);
        await this.admin.query(`DROP DATABASE IF EXISTS ${name}`);
      },
    };
    return cell;
  }

  /** Waits until no session other than the probe is connected (graphile's stop() returns early). */
  async idle(name, capMs = 15_000, allowed = 1) {
    const until = Date.now() + capMs;
    while (Date.now() < until) {
      const { rows } = await this.admin.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1`, [name]);
      if (rows[0].n <= allowed) return true;
      await sleep(25);
    }
    return false;
  }

  async counters(name) {
    const { rows } = await this.admin.query(
      `SELECT (SELECT xact_commit FROM pg_stat_database WHERE datname = $1)::bigint AS commits, (SELECT wal_bytes FROM pg_stat_wal)::bigint AS wal,
         (SELECT wal_fpi FROM pg_stat_wal)::bigint AS fpi, (SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter)::bigint AS checkpoints,
         pg_current_wal_lsn()::text AS lsn`,
      [name],
    );
    // Full-page images and checkpoints are server-wide: a checkpoint that starts during a cell makes
    // the first change to every page after it write the whole page to the WAL again.
    return { commits: Number(rows[0].commits), wal: Number(rows[0].wal), fpi: Number(rows[0].fpi), checkpoints: Number(rows[0].checkpoints), lsn: rows[0].lsn };
  }

  async close() {
    await this._redis?.close();
    return this.admin.end();
  }
}

/** Starts `processes` worker processes; resolves once each has started its worker. */
export async function startWorkers({ system, url, settings, mode = 'noop', keys = false, processes = 1, pool = 10 }) {
  const state = { count: 0, first: 0, starts: [], children: [] };
  const counts = new Map();
  const firsts = new Map();
  const ready = [];
  for (let i = 0; i < processes; i++) {
    const child = fork(WORKER, [JSON.stringify({ system, url, settings, mode, keys, pool })], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    state.children.push(child);
    ready.push(
      new Promise((resolve, reject) => {
        child.once('exit', (code) => reject(new Error(`worker process exited with ${code} before it was ready`)));
        child.on('message', (m) => {
          if (m.type === 'ready') resolve();
          if (m.type !== 'progress') return;
          counts.set(i, m.count);
          if (m.first) firsts.set(i, m.first);
          for (const s of m.starts) state.starts.push(s);
        });
      }),
    );
  }
  await Promise.all(ready);
  for (const child of state.children) child.removeAllListeners('exit');
  return {
    count: () => [...counts.values()].reduce((a, b) => a + b, 0),
    first: () => Math.min(...firsts.values()),
    starts: state.starts,
    children: state.children,
    /** Stops every live process; resolves with their CPU time (ms), peak RSS and attempt histograms. */
    stop: () =>
      Promise.all(
        state.children
          .filter((c) => c.exitCode === null && c.signalCode === null)
          .map(
            (child) =>
              new Promise((resolve) => {
                const timer = setTimeout(() => (child.kill('SIGKILL'), resolve({ cpuMs: NaN, peakRss: NaN, attempts: {} })), 20_000);
                child.on('message', (m) => m.type === 'stopped' && (clearTimeout(timer), resolve(m)));
                child.send({ type: 'stop' });
              }),
          ),
      ),
  };
}

/** Polls until `done()` is true or the cap passes; returns whether it finished. */
export async function until(done, capMs, everyMs = 10) {
  const end = Date.now() + capMs;
  while (Date.now() < end) {
    if (await done()) return true;
    await sleep(everyMs);
  }
  return false;
}

export function percentile(values, p) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}
