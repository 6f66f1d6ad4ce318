// The MySQL store on MariaDB beside the PostgreSQL store, in one run, rounds interleaved: enqueue
// rate, drain rate (defaults and tuned) and idle pickup latency with polling alone, and what that
// polling costs an idle server. Ratios, not rates, are the result (bench/README.md, "The rules").
//
//   npm run build && node bench/mariadb.bench.mjs [--jobs 20000] [--rounds 3] [--latency 200] [--only drain,enqueue,latency,idle] [--polls 1000,100,40,30]
//
// PostgreSQL: DATABASE_URL (default the machine's, postgres://postgres@127.0.0.1:5432/test).
// MariaDB: MARIADB_URL (default mysql://root@127.0.0.1:3306/test). Each cell gets a fresh schema
// (PostgreSQL) or table prefix (MariaDB), dropped after it. Workers run in this process; producers
// use a store of their own, as another process would, so no in-process wake-up hint reaches the
// worker: on MariaDB it hears of new jobs only by polling.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import { MysqlJobStore, PostgresJobStore } from '../dist/lib/index.js';
import { FunctionInvoker, WorkerNode } from '../dist/lib/worker/public-api.js';

const { values: args } = parseArgs({
  options: {
    jobs: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '3' },
    latency: { type: 'string', default: '200' },
    only: { type: 'string', default: 'enqueue,drain,latency,idle' },
    // MariaDB's poll intervals for the latency and idle-cost cells, in ms.
    polls: { type: 'string', default: '1000,100,40,30' },
  },
});
const JOBS = Number(args.jobs);
const ROUNDS = Number(args.rounds);
const SERIAL = Number(args.latency);
const ONLY = new Set(args.only.split(','));
const POLLS = args.polls.split(',').map(Number);
const PG_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const MARIADB_URL = process.env.MARIADB_URL ?? 'mysql://root@127.0.0.1:3306/test';
const PAYLOAD = { order: 'x'.repeat(80) };
const silent = { log() {}, warn() {}, error() {} };

const servers = {
  postgres: {
    async open(poolSize) {
      const schema = `bench_${randomBytes(4).toString('hex')}`;
      const dataSource = await new DataSource({ type: 'postgres', url: PG_URL, extra: { max: poolSize } }).initialize();
      return { dataSource, make: (options = {}) => new PostgresJobStore({ dataSource, schema, ...options }), drop: () => dataSource.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`) };
    },
  },
  mariadb: {
    async open(poolSize) {
      const prefix = `bench_${randomBytes(4).toString('hex')}_`;
      const dataSource = await new DataSource({ type: 'mariadb', url: MARIADB_URL, poolSize }).initialize();
      return {
        dataSource,
        make: (options = {}) => new MysqlJobStore({ dataSource, tablePrefix: prefix, poolSize: Math.max(4, Math.min(poolSize, 20)), ...options }),
        drop: async () => {
          const rows = await dataSource.query(`SELECT table_name AS t FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE ?`, [`${prefix}%`]);
          if (rows.length > 0) await dataSource.query(`DROP TABLE ${rows.map((r) => `\`${r.t}\``).join(', ')}`);
        },
      };
    },
  },
};

/** cell id → server, worker options, store options. */
const cells = {
  'pg-default': { server: 'postgres', worker: { concurrency: 10 }, store: {} },
  'pg-tuned': { server: 'postgres', worker: { concurrency: 200, claimBatchSize: 200 }, store: { asyncClaimCommit: true } },
  'mariadb-default': { server: 'mariadb', worker: { concurrency: 10 }, store: {} },
  'mariadb-tuned': { server: 'mariadb', worker: { concurrency: 200, claimBatchSize: 200 }, store: {} },
};

async function withCell(id, work) {
  const cell = cells[id];
  const db = await servers[cell.server].open(24);
  try {
    return await work(db, cell);
  } finally {
    await db.drop().catch(() => undefined);
    await db.dataSource.destroy();
  }
}

function startWorker(store, options, onStart) {
  const invoker = new FunctionInvoker({ noop: { handle: async (payload) => onStart(payload) } });
  const node = new WorkerNode({ store, invoker, logger: silent, options: { scheduling: false, shutdownGraceMs: 1_000, ...options } });
  return node.start().then(() => node);
}

async function enqueueCell(id) {
  return withCell(id, async (db, cell) => {
    const store = db.make(cell.store);
    await store.migrate();
    const t0 = performance.now();
    for (let i = 0; i < JOBS; i += 1_000) {
      await store.jobEnqueueMany({ jobs: Array.from({ length: Math.min(1_000, JOBS - i) }, (_, k) => ({ name: 'noop', payload: { ...PAYLOAD, k: i + k } })) });
    }
    const batched = JOBS / ((performance.now() - t0) / 1_000);
    // One job per call, ten callers at once: what an API that enqueues per request does.
    const single = Math.min(JOBS, 2_000);
    const t1 = performance.now();
    let next = 0;
    await Promise.all(Array.from({ length: 10 }, async () => {
      while (next < single) {
        next += 1;
        await store.jobEnqueue({ job: { name: 'noop', payload: PAYLOAD } });
      }
    }));
    const each = single / ((performance.now() - t1) / 1_000);
    await store.close();
    return { batched: Math.round(batched), single: Math.round(each) };
  });
}

async function drainCell(id) {
  return withCell(id, async (db, cell) => {
    const producer = db.make();
    await producer.migrate();
    for (let i = 0; i < JOBS; i += 1_000) {
      await producer.jobEnqueueMany({ jobs: Array.from({ length: Math.min(1_000, JOBS - i) }, (_, k) => ({ name: 'noop', payload: { ...PAYLOAD, k: i + k } })) });
    }
    await producer.close();
    if (cell.server === 'postgres') await db.dataSource.query('ANALYZE');
    const store = db.make(cell.store);
    let done = 0;
    let finished;
    const all = new Promise((resolve) => (finished = resolve));
    const t0 = performance.now();
    const node = await startWorker(store, cell.worker, () => {
      done += 1;
      if (done === JOBS) finished();
    });
    await all;
    const seconds = (performance.now() - t0) / 1_000;
    await node.stop();
    await store.close();
    return { jobsPerSecond: Math.round(JOBS / seconds) };
  });
}

async function latencyCell(id, pollIntervalMs) {
  return withCell(id, async (db, cell) => {
    const producer = db.make();
    await producer.migrate();
    const store = db.make(cell.store);
    let started = null;
    const node = await startWorker(store, { ...cell.worker, pollIntervalMs }, () => {
      started?.(performance.now());
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const latencies = [];
    for (let i = 0; i < SERIAL; i += 1) {
      const start = new Promise((resolve) => (started = resolve));
      await producer.jobEnqueue({ job: { name: 'noop', payload: PAYLOAD } });
      const committed = performance.now();
      latencies.push((await start) - committed);
      // A pause of up to one poll interval, so enqueues fall at any point of the worker's poll
      // cycle, as independent producers' do (a fixed short pause lands each just after a poll).
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.max(20, pollIntervalMs)));
    }
    await node.stop();
    await producer.close();
    await store.close();
    latencies.sort((a, b) => a - b);
    const at = (p) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))];
    return { pollIntervalMs, p50: +at(50).toFixed(2), p99: +at(99).toFixed(2) };
  });
}

/**
 * An idle worker polling MariaDB for 10 s: the queries it sent (counted by the store, so other
 * clients of a shared server do not count), the server's statements and its CPU time (all
 * clients': read them on a server of your own).
 */
async function idleCost(pollIntervalMs) {
  return withCell('mariadb-default', async (db) => {
    let queries = 0;
    const store = db.make({ onStatement: () => (queries += 1) });
    await store.migrate();
    const node = await startWorker(store, { concurrency: 10, pollIntervalMs }, () => {});
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const before = await serverLoad(db.dataSource);
    const sent = queries;
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    const after = await serverLoad(db.dataSource);
    const workerQueries = queries - sent;
    await node.stop();
    await store.close();
    return {
      pollIntervalMs,
      workerQueriesPerSecond: +(workerQueries / 10).toFixed(1),
      serverStatementsPerSecond: +((after.questions - before.questions) / 10).toFixed(1),
      serverCpuPercent: after.cpuMs === null ? null : +(((after.cpuMs - before.cpuMs) / 10_000) * 100).toFixed(2),
    };
  });
}

async function serverLoad(dataSource) {
  const [row] = await dataSource.query("SHOW GLOBAL STATUS LIKE 'Questions'");
  let cpuMs = null;
  try {
    const pid = readFileSync('/run/mysqld/mysqld.pid', 'utf8').trim();
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    cpuMs = ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    // Not on this host, or another layout: CPU is left out.
  }
  return { questions: Number(row.Value), cpuMs };
}

async function settings() {
  const pg = await new DataSource({ type: 'postgres', url: PG_URL }).initialize();
  const [pgRow] = await pg.query(`SELECT version() AS version, current_setting('synchronous_commit') AS synchronous_commit, current_setting('fsync') AS fsync, current_setting('shared_buffers') AS shared_buffers`);
  await pg.destroy();
  const my = await new DataSource({ type: 'mariadb', url: MARIADB_URL }).initialize();
  const [myRow] = await my.query(
    'SELECT VERSION() AS version, @@innodb_flush_log_at_trx_commit AS innodb_flush_log_at_trx_commit, @@sync_binlog AS sync_binlog, @@log_bin AS log_bin, @@innodb_buffer_pool_size AS innodb_buffer_pool_size, @@innodb_doublewrite AS innodb_doublewrite',
  );
  await my.destroy();
  return { postgres: pgRow, mariadb: myRow };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const results = { meta: { jobs: JOBS, rounds: ROUNDS, serial: SERIAL, at: new Date().toISOString(), servers: await settings() }, enqueue: {}, drain: {}, latency: {}, idle: [] };
console.log(JSON.stringify(results.meta.servers));
for (let round = 1; round <= ROUNDS; round += 1) {
  const order = round % 2 === 1 ? Object.keys(cells) : Object.keys(cells).reverse();
  for (const id of order) {
    if (ONLY.has('enqueue') && id.endsWith('default')) (results.enqueue[id] ??= []).push(await enqueueCell(id));
    if (ONLY.has('drain')) (results.drain[id] ??= []).push(await drainCell(id));
    console.log(`round ${round} ${id}: enqueue ${JSON.stringify(results.enqueue[id]?.at(-1) ?? null)} drain ${JSON.stringify(results.drain[id]?.at(-1) ?? null)}`);
  }
}
if (ONLY.has('latency')) {
  for (const [id, poll] of [['pg-default', 1_000], ...POLLS.map((poll) => ['mariadb-default', poll])]) {
    (results.latency[`${id} poll ${poll}`] = await latencyCell(id, poll));
    console.log(`latency ${id} poll ${poll}: ${JSON.stringify(results.latency[`${id} poll ${poll}`])}`);
  }
}
if (ONLY.has('idle')) {
  for (const poll of POLLS) {
    results.idle.push(await idleCost(poll));
    console.log(`idle cost: ${JSON.stringify(results.idle.at(-1))}`);
  }
}
const summary = {
  drain: Object.fromEntries(Object.entries(results.drain).map(([id, runs]) => [id, median(runs.map((r) => r.jobsPerSecond))])),
  enqueue: Object.fromEntries(Object.entries(results.enqueue).map(([id, runs]) => [id, { batched: median(runs.map((r) => r.batched)), single: median(runs.map((r) => r.single)) }])),
};
if (summary.drain['mariadb-tuned'] && summary.drain['pg-tuned']) summary.tunedRatio = +(summary.drain['mariadb-tuned'] / summary.drain['pg-tuned']).toFixed(2);
if (summary.drain['mariadb-default'] && summary.drain['pg-default']) summary.defaultRatio = +(summary.drain['mariadb-default'] / summary.drain['pg-default']).toFixed(2);
results.summary = summary;
console.log(JSON.stringify(summary, null, 2));
console.log(JSON.stringify({ latency: results.latency, idle: results.idle }, null, 2));
