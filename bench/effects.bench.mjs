// The cost of effects on PostgreSQL, each cell beside its own baseline in one run on one database:
//   1. concurrency and rate limits: drain throughput with no limit, a queue cap, per-key caps and
//      rates (none of them binding, so the difference is the bookkeeping, not the limit doing its job);
//   2. fan-out: one parent, 10,000 dependants: the parent's outcome write, and the time until
//      every dependant is released;
//   3. fan-in: 1,000 parents, one dependant: enqueueing it, and finishing the parents.
// Usage: node bench/effects.bench.mjs [--jobs 10000] [--rounds 3] [--limits-only]
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { PostgresJobStore, SqliteJobStore } from '../dist/lib/index.js';
import { fmt, median, openDataSource, postgres, schemaName, table } from './support.mjs';

const { values } = parseArgs({
  options: { jobs: { type: 'string', default: '10000' }, rounds: { type: 'string', default: '3' }, 'limits-only': { type: 'boolean', default: false } },
});
const JOBS = Number(values.jobs);
const ROUNDS = Number(values.rounds);
const LOOPS = 4;
const CLAIM = 50;
const LEASE = 60_000;

const server = await postgres();
const dataSource = await openDataSource(server.url, 16);
const schemas = [];

async function freshStore() {
  // Start every cell from a clean checkpoint, so one cell's write-ahead log is not the next one's bill.
  await dataSource.query('CHECKPOINT');
  const schema = schemaName('bench');
  schemas.push(schema);
  const store = new PostgresJobStore({ dataSource, schema });
  await store.migrate();
  return store;
}

async function enqueueAll(store, inputs) {
  for (let i = 0; i < inputs.length; i += 1_000) await store.jobEnqueueMany({ jobs: inputs.slice(i, i + 1_000) });
}

/** LOOPS claimers, each claiming CLAIM at a time and writing the outcomes in one fenced batch. */
async function drain(store, total) {
  let done = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: LOOPS }, async (_, i) => {
      while (done < total) {
        const jobs = await store.jobClaim({ workerId: `w${i}`, limit: CLAIM, queues: ['default'], leaseMs: LEASE });
        if (jobs.length === 0) {
          await new Promise((resolve) => setTimeout(resolve, 1));
          continue;
        }
        await store.jobCompleteMany({ workerId: `w${i}`, outcomes: jobs.map((j) => ({ jobId: j.id, attempt: j.attempt, kind: 'succeeded' })) });
        done += jobs.length;
      }
    }),
  );
  return (total / (performance.now() - started)) * 1_000;
}

const limitCells = [
  { name: 'no limit', setup: async () => {}, key: () => undefined },
  { name: 'queue cap 10,000', setup: (s) => s.concurrencyLimitSet({ target: { queue: 'default' }, max: 10_000 }), key: () => undefined },
  {
    name: '100 keys, cap 10 each',
    setup: async (s) => {
      for (let k = 0; k < 100; k++) await s.concurrencyLimitSet({ target: { key: `tenant-${k}` }, max: 10 });
    },
    key: (i) => `tenant-${i % 100}`,
  },
  {
    name: 'queue cap 10,000 + 100 keys, cap 10',
    setup: async (s) => {
      await s.concurrencyLimitSet({ target: { queue: 'default' }, max: 10_000 });
      for (let k = 0; k < 100; k++) await s.concurrencyLimitSet({ target: { key: `tenant-${k}` }, max: 10 });
    },
    key: (i) => `tenant-${i % 100}`,
  },
  // Rates that never bind either (no window of a second holds more starts than the drain has jobs
  // of a target): the cost of finding, locking and stamping free starts.
  {
    name: 'queue rate 10,000 per s',
    rate: true,
    setup: (s) => s.rateLimitSet({ target: { queue: 'default' }, rate: { max: 10_000, perMs: 1_000 } }),
    key: () => undefined,
  },
  {
    name: '100 keys, rate 100 per s each',
    rate: true,
    setup: async (s) => {
      for (let k = 0; k < 100; k++) await s.rateLimitSet({ target: { key: `tenant-${k}` }, rate: { max: 100, perMs: 1_000 } });
    },
    key: (i) => `tenant-${i % 100}`,
  },
].filter((cell) => !cell.rate || typeof PostgresJobStore.prototype.rateLimitSet === 'function');

/**
 * Every cell twice: as the tables are right after the load (PostgreSQL has never analyzed them, as
 * in the first minute after a bulk load, before autovacuum does), and after ANALYZE (steady state).
 */
async function limitRound() {
  const result = {};
  for (const analyzed of [false, true]) {
    for (const cell of limitCells) {
      const store = await freshStore();
      await cell.setup(store);
      await enqueueAll(
        store,
        Array.from({ length: JOBS }, (_, i) => ({ name: 'noop', payload: null, ...(cell.key(i) ? { concurrencyKey: cell.key(i) } : {}) })),
      );
      const t = store.naming;
      if (analyzed) await dataSource.query(`ANALYZE ${[t.jobs, t.slots, t.limits, t.rateLimits, t.rateStarts].filter(Boolean).join(', ')}`);
      result[`${cell.name}${analyzed ? ', analyzed' : ''}`] = await drain(store, JOBS);
    }
  }
  return result;
}

async function claimOne(store, id) {
  const [job] = await store.jobClaim({ workerId: 'p', limit: 1, queues: ['default'], leaseMs: LEASE });
  if (job?.id !== id) throw new Error(`expected to claim ${id}`);
  return job;
}

async function timed(work) {
  const started = performance.now();
  const value = await work();
  return { ms: performance.now() - started, value };
}

async function fanOutRound(children) {
  const store = await freshStore();
  const { id: lone } = await store.jobEnqueue({ job: { name: 'lone', payload: null } });
  const loneJob = await claimOne(store, lone);
  const baseline = await timed(() => store.jobCompleteMany({ workerId: 'p', outcomes: [{ jobId: lone, attempt: loneJob.attempt, kind: 'succeeded' }] }));

  const { id: parent } = await store.jobEnqueue({ job: { name: 'parent', payload: null } });
  const enqueue = await timed(() => enqueueAll(store, Array.from({ length: children }, (_, i) => ({ name: 'child', payload: i, dependsOn: [parent] }))));
  const job = await claimOne(store, parent);
  const write = await timed(() => store.jobCompleteMany({ workerId: 'p', outcomes: [{ jobId: parent, attempt: job.attempt, kind: 'succeeded' }] }));
  const settle = await timed(async () => {
    let total = 0;
    for (let n = 1; n > 0; total += n) n = await store.jobSettleDependencies({ limit: 1_000 });
    return total;
  });
  const waiting = (await store.jobStats()).counts.filter((c) => c.state === 'awaiting_parents').reduce((a, c) => a + c.count, 0);
  if (waiting !== 0) throw new Error(`${waiting} children still wait after the sweep`);
  const drained = await drain(store, children);
  return { baselineWrite: baseline.ms, enqueue: enqueue.ms, write: write.ms, settle: settle.ms, settledBySweep: settle.value, drained };
}

async function fanInRound(parents) {
  const results = {};
  for (const withChild of [false, true]) {
    const store = await freshStore();
    const ids = [];
    for (let i = 0; i < parents; i += 1_000) {
      ids.push(...(await store.jobEnqueueMany({ jobs: Array.from({ length: Math.min(1_000, parents - i) }, (_, k) => ({ name: 'parent', payload: i + k })) })).map((r) => r.id));
    }
    let child;
    const enqueue = withChild ? await timed(async () => (child = (await store.jobEnqueue({ job: { name: 'child', payload: null, dependsOn: ids } })).id)) : { ms: 0 };
    const finish = await timed(async () => {
      for (let done = 0; done < parents; ) {
        const jobs = await store.jobClaim({ workerId: 'p', limit: 100, queues: ['default'], leaseMs: LEASE });
        const mine = jobs.filter((j) => j.name === 'parent');
        await store.jobCompleteMany({ workerId: 'p', outcomes: jobs.map((j) => ({ jobId: j.id, attempt: j.attempt, kind: 'succeeded' })) });
        done += mine.length;
      }
    });
    if (withChild) {
      const state = (await store.jobGet({ jobId: child })).state;
      if (state !== 'scheduled') throw new Error(`the fan-in child is ${state} after its last parent succeeded`);
    }
    results[withChild ? 'child' : 'baseline'] = { enqueue: enqueue.ms, finish: finish.ms };
  }
  return results;
}

/** SQLite settles every edge inside the parent's outcome write (one writer; no sweep): how long is it? */
async function sqliteFanOut(children) {
  const dir = mkdtempSync(join(tmpdir(), 'durable-scheduler-bench-sqlite-'));
  const sqlite = await new DataSource({ type: 'better-sqlite3', database: join(dir, 'bench.db') }).initialize();
  try {
    const store = new SqliteJobStore({ dataSource: sqlite });
    await store.migrate();
    const { id: lone } = await store.jobEnqueue({ job: { name: 'lone', payload: null } });
    const loneJob = await claimOne(store, lone);
    const baseline = await timed(() => store.jobCompleteMany({ workerId: 'p', outcomes: [{ jobId: lone, attempt: loneJob.attempt, kind: 'succeeded' }] }));
    const { id: parent } = await store.jobEnqueue({ job: { name: 'parent', payload: null } });
    await enqueueAll(store, Array.from({ length: children }, (_, i) => ({ name: 'child', payload: i, dependsOn: [parent] })));
    const job = await claimOne(store, parent);
    const write = await timed(() => store.jobCompleteMany({ workerId: 'p', outcomes: [{ jobId: parent, attempt: job.attempt, kind: 'succeeded' }] }));
    return { baselineWrite: baseline.ms, write: write.ms };
  } finally {
    await sqlite.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(`# effects benchmark on ${server.label}: ${JOBS} jobs per drain, ${LOOPS} claim loops × ${CLAIM}, median of ${ROUNDS} rounds\n`);
try {
  const limitRuns = [];
  const fanOuts = [];
  const fanIns = [];
  const sqliteFanOuts = [];
  for (let r = 0; r < ROUNDS; r++) {
    limitRuns.push(await limitRound());
    if (values['limits-only']) continue;
    fanOuts.push(await fanOutRound(10_000));
    fanIns.push(await fanInRound(1_000));
    sqliteFanOuts.push(await sqliteFanOut(10_000));
  }

  console.log('## Concurrency and rate limits: drain throughput\n');
  const rate = (name) => median(limitRuns.map((r) => r[name]));
  table(
    ['Cell', 'never analyzed: jobs/s', 'ratio', 'after ANALYZE: jobs/s', 'ratio'],
    limitCells.map((c) => {
      const [fresh, steady] = [rate(c.name), rate(`${c.name}, analyzed`)];
      return [c.name, fmt(fresh), fmt(fresh / rate('no limit'), 2), fmt(steady), fmt(steady / rate('no limit, analyzed'), 2)];
    }),
  );

  if (!values['limits-only']) {
    console.log('\n## Fan-out: one parent, 10,000 dependants\n');
    const m = (key) => median(fanOuts.map((f) => f[key]));
    table(
      ['Measure', 'Median'],
      [
        ['enqueue the 10,000 dependants (10 batches of 1,000)', `${fmt(m('enqueue'))} ms`],
        ['outcome write of a job with no dependants', `${fmt(m('baselineWrite'), 1)} ms`],
        ['outcome write of the parent (settles the first 1,000 edges inline)', `${fmt(m('write'), 1)} ms`],
        [`sweep settling the remaining ${fmt(m('settledBySweep'))} edges (batches of 1,000)`, `${fmt(m('settle'))} ms`],
        ['parent success → all 10,000 dependants due', `${fmt(m('write') + m('settle'))} ms`],
        ['draining the 10,000 released dependants', `${fmt(m('drained'))} jobs/s`],
      ],
    );

    console.log('\n## Fan-in: 1,000 parents, one dependant\n');
    const fi = (side, key) => median(fanIns.map((f) => f[side][key]));
    table(
      ['Measure', 'Median'],
      [
        ['enqueue the dependant of 1,000 parents', `${fmt(fi('child', 'enqueue'), 1)} ms`],
        ['finish 1,000 parents with no dependant (batches of 100)', `${fmt(fi('baseline', 'finish'))} ms`],
        ['finish 1,000 parents of one dependant (batches of 100)', `${fmt(fi('child', 'finish'))} ms`],
        ['ratio', fmt(fi('child', 'finish') / fi('baseline', 'finish'), 2)],
      ],
    );

    console.log('\n## SQLite fan-out: one parent, 10,000 dependants, settled in the outcome write\n');
    const sq = (key) => median(sqliteFanOuts.map((f) => f[key]));
    table(
      ['Measure', 'Median'],
      [
        ['outcome write of a job with no dependants', `${fmt(sq('baselineWrite'), 1)} ms`],
        ['outcome write of the parent (releases all 10,000)', `${fmt(sq('write'))} ms`],
      ],
    );
  }
} finally {
  for (const schema of schemas) await dataSource.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await dataSource.destroy();
  await server.stop();
}
