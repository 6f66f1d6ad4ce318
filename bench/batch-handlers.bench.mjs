// What a batch handler (docs: a handler with `batch: { size }` and `handleBatch(jobs, ctx)`) gains
// when its work is a database write: JOBS jobs, each carrying a small body that must become one row
// of a user table (bench_rows) on the store's own database, drained by one WorkerNode
// (concurrency 10, defaults otherwise) in this process. Cells, each on a fresh schema (PostgreSQL,
// DATABASE_URL or postgres://postgres@127.0.0.1:5432/test), table prefix (MariaDB, MARIADB_URL or
// mysql://root@127.0.0.1:3306/test) or file (SQLite, in the temp directory), rounds alternating the
// order of the cells:
//   plain      `handle(payload)`: one INSERT per job;
//   batch100   `batch: { size: 100 }`: one multi-row INSERT per call;
//   batch500   `batch: { size: 500 }`: the same, 500 rows per call at most (claims take 200 at the
//              node's default claimBatchSize, and a batch with waitMs 0 starts with what is held);
//   noop       (not by default) a plain handler that writes nothing: the node and store alone.
// Per cell: jobs/s, jobs per call, the median call's time, the share of the drain during which no
// handler call ran (the node claiming, writing outcomes, or waiting to), worker CPU per job.
// All jobs are enqueued first (enqueueMany, 1,000 per call), then timed from node.start() until the
// node has reported JOBS applied successes. The user table must then hold exactly JOBS rows, one
// per job, and the store must count JOBS succeeded jobs: the bench exits 1 otherwise, and when no
// job settles for --stall seconds.
// The user writes go through the store's DataSource (on SQLite the DataSource's one connection,
// which the store's gate serializes with its own transactions; nothing here opens a transaction).
// Usage: node bench/batch-handlers.bench.mjs [--store postgres|mariadb|sqlite] [--jobs 20000] [--rounds 3]
//          [--cells plain,batch100,batch500] [--concurrency 10] [--poll ms] [--stall 60]
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import { MysqlJobStore, PostgresJobStore, SqliteJobStore } from '../dist/lib/index.js';
import { FunctionInvoker, WorkerNode } from '../dist/lib/worker/public-api.js';
import { fmt, median, schemaName, table } from './support.mjs';

const { values } = parseArgs({
  options: {
    store: { type: 'string', default: 'postgres' },
    jobs: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '3' },
    cells: { type: 'string', default: 'plain,batch100,batch500' },
    concurrency: { type: 'string', default: '10' },
    stall: { type: 'string', default: '60' },
    // The node's pollIntervalMs; absent: its default (1 s).
    poll: { type: 'string' },
  },
});
const STORE = values.store;
const JOBS = Number(values.jobs);
const ROUNDS = Number(values.rounds);
const CONCURRENCY = Number(values.concurrency);
const STALL_MS = Number(values.stall) * 1_000;
const CELLS = values.cells.split(',');
const POLL_MS = values.poll === undefined ? undefined : Number(values.poll);
const NAME = 'bench.row';
if (!['postgres', 'mariadb', 'sqlite'].includes(STORE)) throw new Error(`--store must be postgres, mariadb or sqlite, got ${STORE}`);
for (const cell of CELLS) if (cell !== 'plain' && cell !== 'noop' && !/^batch\d+$/.test(cell)) throw new Error(`unknown cell ${cell}: noop, plain or batch<size>`);

const PG_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const MARIADB_URL = process.env.MARIADB_URL ?? 'mysql://root@127.0.0.1:3306/test';
// The store's claims and outcome writes beside one handler write per slot.
const POOL = CONCURRENCY + 6;
const shared =
  STORE === 'postgres'
    ? await new DataSource({ type: 'postgres', url: PG_URL, extra: { max: POOL } }).initialize()
    : STORE === 'mariadb'
      ? await new DataSource({ type: 'mariadb', url: MARIADB_URL, poolSize: POOL }).initialize()
      : null;

/**
 * A fresh store with a user table beside it: the store, the DataSource to write rows through, the
 * table's name, a placeholder maker, and the cleanup that closes and drops both.
 */
async function freshCell() {
  if (STORE === 'postgres') {
    await shared.query('CHECKPOINT');
    const schema = schemaName('batchhandler');
    const store = new PostgresJobStore({ dataSource: shared, schema });
    await store.migrate();
    const rows = `"${schema}".bench_rows`;
    await shared.query(`CREATE TABLE ${rows} (id serial PRIMARY KEY, job_id text NOT NULL, body text NOT NULL)`);
    return {
      store,
      dataSource: shared,
      rows,
      mark: (i) => `$${i}`,
      cleanup: async () => {
        await store.close();
        await shared.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      },
    };
  }
  if (STORE === 'mariadb') {
    const tablePrefix = `bh_${randomBytes(4).toString('hex')}_`;
    const store = new MysqlJobStore({ dataSource: shared, tablePrefix, poolSize: POOL });
    await store.migrate();
    const rows = `\`${tablePrefix}bench_rows\``;
    await shared.query(`CREATE TABLE ${rows} (id INT AUTO_INCREMENT PRIMARY KEY, job_id VARCHAR(64) NOT NULL, body TEXT NOT NULL) ENGINE=InnoDB`);
    return {
      store,
      dataSource: shared,
      rows,
      mark: () => '?',
      cleanup: async () => {
        // First, before its tables go: a MySQL store's own pool would keep the process alive.
        await store.close();
        const found = await shared.query('SELECT table_name AS t FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE ?', [`${tablePrefix}%`]);
        if (found.length > 0) await shared.query(`DROP TABLE ${found.map((r) => `\`${r.t}\``).join(', ')}`);
      },
    };
  }
  const file = join(tmpdir(), `batchhandler-${randomBytes(4).toString('hex')}.db`);
  const sqlite = await new DataSource({ type: 'better-sqlite3', database: file }).initialize();
  const store = new SqliteJobStore({ dataSource: sqlite });
  await store.migrate();
  await sqlite.query('CREATE TABLE bench_rows (id INTEGER PRIMARY KEY AUTOINCREMENT, job_id TEXT NOT NULL, body TEXT NOT NULL)');
  return {
    store,
    dataSource: sqlite,
    rows: 'bench_rows',
    mark: () => '?',
    cleanup: async () => {
      await store.close();
      await sqlite.destroy();
      for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
    },
  };
}

async function enqueueAll(store) {
  for (let from = 0; from < JOBS; from += 1_000) {
    const jobs = Array.from({ length: Math.min(1_000, JOBS - from) }, (_, k) => ({ name: NAME, payload: { body: `row ${from + k} ${'x'.repeat(64)}` } }));
    await store.jobEnqueueMany({ jobs });
  }
}

/**
 * What a cell's handler calls record: each call's size, how long its INSERT took (ms), and how
 * long no call ran at all while jobs were left (ms): the node claiming, or waiting to.
 */
function tracker() {
  let running = 0;
  let idleSince = null;
  const track = {
    calls: [],
    writes: [],
    idleMs: 0,
    start(now) {
      idleSince = now;
    },
    async call(size, work) {
      const started = performance.now();
      if (running++ === 0 && idleSince !== null) track.idleMs += started - idleSince;
      try {
        await work();
      } finally {
        track.calls.push(size);
        track.writes.push(performance.now() - started);
        if (--running === 0) idleSince = performance.now();
      }
    },
  };
  return track;
}

/** The handler of a cell: `noop` writes nothing, `plain` one row per job, `batch<size>` one INSERT per call. */
function handlerOf(cell, { dataSource, rows, mark }, track) {
  if (cell === 'noop') return { handle: () => track.call(1, async () => {}) };
  if (cell === 'plain') {
    const sql = `INSERT INTO ${rows} (job_id, body) VALUES (${mark(1)}, ${mark(2)})`;
    return { handle: (payload, ctx) => track.call(1, () => dataSource.query(sql, [ctx.jobId, payload.body])) };
  }
  return {
    batch: { size: Number(cell.slice('batch'.length)) },
    handleBatch: (jobs) => {
      const tuples = jobs.map((_, i) => `(${mark(2 * i + 1)}, ${mark(2 * i + 2)})`).join(', ');
      return track.call(jobs.length, () => dataSource.query(`INSERT INTO ${rows} (job_id, body) VALUES ${tuples}`, jobs.flatMap((job) => [job.jobId, job.payload.body])));
    },
  };
}

/** A logger that keeps what the node warned of, for the report; info lines are dropped. */
function keepingLogger(kept) {
  const keep = (level) => (message) => kept.push(`${level}: ${String(message).slice(0, 300)}`);
  return { log() {}, debug() {}, verbose() {}, warn: keep('warn'), error: keep('error') };
}

async function runCell(cell) {
  const db = await freshCell();
  try {
    await enqueueAll(db.store);
    if (STORE === 'postgres') await shared.query(`ANALYZE ${db.store.naming.jobs}`);
    const track = tracker();
    const warnings = [];
    const invoker = new FunctionInvoker({ [NAME]: handlerOf(cell, db, track) });
    const options = { concurrency: CONCURRENCY, scheduling: false, shutdownGraceMs: 5_000, ...(POLL_MS === undefined ? {} : { pollIntervalMs: POLL_MS }) };
    const node = new WorkerNode({ store: db.store, invoker, logger: keepingLogger(warnings), options });
    let succeeded = 0;
    const other = new Map();
    let lastSettled = performance.now();
    let finished;
    const all = new Promise((resolve) => (finished = resolve));
    node.events.on('settled', (event) => {
      lastSettled = performance.now();
      if (event.status === 'applied' && event.kind === 'succeeded') {
        succeeded += 1;
        if (succeeded === JOBS) finished();
      } else {
        const key = `${event.kind}/${event.status}${event.errorType ? `/${event.errorType}` : ''}`;
        other.set(key, (other.get(key) ?? 0) + 1);
      }
    });
    const cpu = process.cpuUsage();
    const started = performance.now();
    track.start(started);
    // Ends the wait with the count short, which the checks below report.
    const watchdog = setInterval(() => {
      if (performance.now() - lastSettled > STALL_MS) finished();
    }, 1_000);
    await node.start();
    await all;
    const seconds = (performance.now() - started) / 1_000;
    const used = process.cpuUsage(cpu);
    clearInterval(watchdog);
    const timedOut = succeeded < JOBS;
    await node.stop();
    const [{ n, jobs }] = await db.dataSource.query(`SELECT COUNT(*) AS n, COUNT(DISTINCT job_id) AS jobs FROM ${db.rows}`);
    const totals = await db.store.jobCountTotals();
    const problems = [];
    if (timedOut) problems.push(`no job settled for ${STALL_MS / 1_000} s with ${succeeded} of ${JOBS} succeeded`);
    if (cell !== 'noop' && (Number(n) !== JOBS || Number(jobs) !== JOBS)) problems.push(`bench_rows holds ${n} rows of ${jobs} jobs, not ${JOBS}`);
    if (totals.counts.succeeded !== JOBS) problems.push(`the store counts ${JSON.stringify(totals.counts)}`);
    if (other.size > 0) problems.push(`settled otherwise: ${JSON.stringify(Object.fromEntries(other))}`);
    if (warnings.length > 0) console.log(`  ${cell}: the node logged ${warnings.length} warnings or errors, the first: ${warnings.slice(0, 3).join(' | ')}`);
    if (problems.length > 0) throw new Error(`${STORE} ${cell}: ${problems.join('; ')}`);
    return {
      rate: JOBS / seconds,
      calls: track.calls.length,
      meanCall: track.calls.reduce((a, b) => a + b, 0) / track.calls.length,
      writeMs: median(track.writes),
      idleShare: track.idleMs / (seconds * 1_000),
      cpuUsPerJob: (used.user + used.system) / JOBS,
    };
  } finally {
    await db.cleanup();
  }
}

console.log(`${STORE}: ${JOBS} jobs, ${ROUNDS} rounds, concurrency ${CONCURRENCY}, cells ${CELLS.join(', ')}; load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
const results = Object.fromEntries(CELLS.map((cell) => [cell, []]));
let failed = null;
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const cell of round % 2 === 0 ? CELLS : [...CELLS].reverse()) {
      const r = await runCell(cell);
      results[cell].push(r);
      console.log(`  round ${round + 1} ${cell}: ${fmt(r.rate)} jobs/s, ${r.calls} calls of ${r.meanCall.toFixed(1)} jobs on average, call median ${r.writeMs.toFixed(2)} ms, no call running ${(r.idleShare * 100).toFixed(0)} % of the time, worker CPU ${r.cpuUsPerJob.toFixed(0)} µs/job; load ${loadavg()[0].toFixed(2)}`);
    }
  }
} catch (error) {
  failed = error;
}
if (!failed) {
  const rate = (cell) => median(results[cell].map((r) => r.rate));
  const base = CELLS.includes('plain') ? rate('plain') : null;
  table(
    ['cell', 'jobs/s (median)', 'rounds', '/ plain', 'jobs per call', 'call ms', 'no call running', 'worker CPU µs/job'],
    CELLS.map((cell) => [
      cell,
      fmt(rate(cell)),
      results[cell].map((r) => fmt(r.rate)).join(', '),
      base ? (rate(cell) / base).toFixed(2) : '–',
      median(results[cell].map((r) => r.meanCall)).toFixed(1),
      median(results[cell].map((r) => r.writeMs)).toFixed(2),
      `${(median(results[cell].map((r) => r.idleShare)) * 100).toFixed(0)} %`,
      fmt(median(results[cell].map((r) => r.cpuUsPerJob))),
    ]),
  );
  console.log(`load at the end ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
}
await shared?.destroy();
if (failed) {
  console.error(failed);
  process.exitCode = 1;
}
