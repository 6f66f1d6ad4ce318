// What fair groups cost and buy on PostgreSQL (docs/groups.md), each cell on a fresh schema, rounds
// interleaved. Group A holds JOBS due jobs; while a worker node drains them, a producer enqueues one
// job of group B a second. Cells: A and B grouped, or neither (the same jobs without a group), at
// the worker's defaults (concurrency 10) and tuned (concurrency 200, claims of 200, asynchronous
// claim commits). Reported: A's enqueue (1,000 jobs a call, before the drain) and drain in jobs/s, and B's pickup (from its enqueue to its handler's
// start) p50 and p99 in ms; then, per setting, the grouped drain over the plain one.
// Usage: node bench/groups.bench.mjs [--jobs 100000] [--rounds 2] [--settings defaults,tuned]
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import { PostgresJobStore } from '../dist/lib/index.js';
import { FunctionInvoker, WorkerNode } from '../dist/lib/worker/public-api.js';
import { median, postgres, schemaName } from './support.mjs';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '2' },
    settings: { type: 'string', default: 'defaults,tuned' },
  },
});
const JOBS = Number(values.jobs);
const ROUNDS = Number(values.rounds);
const SETTINGS = {
  defaults: { node: { concurrency: 10 }, store: {} },
  tuned: { node: { concurrency: 200, claimBatchSize: 200 }, store: { asyncClaimCommit: true } },
};
const server = await postgres();
const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

async function cell(grouped, setting) {
  const schema = schemaName('groups');
  const { node: nodeOptions, store: storeOptions } = SETTINGS[setting];
  const admin = await new DataSource({ type: 'postgres', url: server.url, extra: { max: 2 } }).initialize();
  const dataSource = await new DataSource({ type: 'postgres', url: server.url, extra: { max: 10 } }).initialize();
  try {
    await admin.query('CHECKPOINT');
    const store = new PostgresJobStore({ dataSource, schema, ...storeOptions });
    await store.migrate();
    const producer = new PostgresJobStore({ dataSource: admin, schema });
    const enqueueStarted = performance.now();
    for (let from = 0; from < JOBS; from += 1_000) {
      const jobs = Array.from({ length: Math.min(1_000, JOBS - from) }, () => ({ name: 'noop', payload: {}, ...(grouped ? { group: 'a' } : {}) }));
      await producer.jobEnqueueMany({ jobs });
    }
    const enqueued = JOBS / ((performance.now() - enqueueStarted) / 1000);
    let doneA = 0;
    let finished;
    const drained = new Promise((resolve) => (finished = resolve));
    const pickups = [];
    const invoker = new FunctionInvoker({
      noop: {
        handle: (payload) => {
          if (payload.t !== undefined) pickups.push(Date.now() - payload.t);
          else if (++doneA === JOBS) finished();
        },
      },
    });
    const node = new WorkerNode({ store, invoker, options: { scheduling: false, shutdownGraceMs: 1_000, ...nodeOptions } });
    const started = performance.now();
    await node.start();
    const trickle = setInterval(() => {
      void producer.jobEnqueue({ job: { name: 'noop', payload: { t: Date.now() }, ...(grouped ? { group: 'b' } : {}) } });
    }, 1_000);
    await drained;
    const seconds = (performance.now() - started) / 1000;
    clearInterval(trickle);
    // The B jobs enqueued last are picked up before the node stops.
    await new Promise((resolve) => setTimeout(resolve, 500));
    await node.stop();
    const sorted = pickups.sort((a, b) => a - b);
    return { enqueued, rate: JOBS / seconds, p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), picked: sorted.length };
  } finally {
    await dataSource.destroy();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.destroy();
  }
}

const results = {};
for (let round = 0; round < ROUNDS; round++) {
  for (const setting of values.settings.split(',')) {
    // Alternate which cell goes first, so neither always runs on a warmer server.
    const order = round % 2 === 0 ? [false, true] : [true, false];
    for (const grouped of order) {
      const id = `${setting} ${grouped ? 'grouped' : 'plain'}`;
      const r = await cell(grouped, setting);
      (results[id] ??= []).push(r);
      console.log(`  round ${round + 1} ${id}: A enqueued ${Math.round(r.enqueued)} jobs/s, drained ${Math.round(r.rate)} jobs/s, B pickup p50 ${r.p50} ms p99 ${r.p99} ms (${r.picked} B jobs)`);
    }
  }
}
for (const [id, rs] of Object.entries(results)) {
  console.log(`${id}: A median enqueue ${Math.round(median(rs.map((r) => r.enqueued)))} jobs/s, drain ${Math.round(median(rs.map((r) => r.rate)))} jobs/s; B p99 worst ${Math.max(...rs.map((r) => r.p99))} ms`);
}
for (const setting of values.settings.split(',')) {
  const grouped = median(results[`${setting} grouped`].map((r) => r.rate));
  const plain = median(results[`${setting} plain`].map((r) => r.rate));
  const enqueueRatio = median(results[`${setting} grouped`].map((r) => r.enqueued)) / median(results[`${setting} plain`].map((r) => r.enqueued));
  console.log(`${setting}: grouped/plain drain = ${(grouped / plain).toFixed(2)}, enqueue = ${enqueueRatio.toFixed(2)}`);
}
await server.stop?.();
