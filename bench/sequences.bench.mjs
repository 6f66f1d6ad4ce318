// What a sequence costs on PostgreSQL (docs/sequences.md), each case on a fresh schema, rounds
// interleaved.
// Enqueue: single enqueues from LOOPS concurrent callers:
//   plain          no sequence (the baseline: one statement);
//   seq-own-key    a key per job, so every job heads its own sequence;
//   seq-per-caller a key per caller, so each enqueue appends behind that caller's last job;
//   seq-one-key    one key for all callers, who take turns on its row lock.
// Drain: JOBS jobs, claimed and completed by LOOPS workers (claims of up to BATCH, one outcome
// write per batch), either plain or spread over KEYS sequences, where only each key's head is due.
// Claim: the claim of a plain due job, alone, beside WAITING sequence jobs that wait their turn, and
// (the control) beside WAITING jobs that wait for a parent through dependsOn.
// Usage: node bench/sequences.bench.mjs [--enqueues 4000] [--jobs 20000] [--keys 200] [--waiting 100000] [--rounds 3] [--only enqueue,drain,claim]
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { PostgresJobStore } from '../dist/lib/index.js';
import { median, openDataSource, postgres, schemaName } from './support.mjs';

const { values } = parseArgs({
  options: {
    enqueues: { type: 'string', default: '4000' },
    jobs: { type: 'string', default: '20000' },
    keys: { type: 'string', default: '200' },
    waiting: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '3' },
    only: { type: 'string', default: 'enqueue,drain,claim' },
  },
});
const ONLY = new Set(values.only.split(','));
const ENQUEUES = Number(values.enqueues);
const JOBS = Number(values.jobs);
const KEYS = Number(values.keys);
const WAITING = Number(values.waiting);
const ROUNDS = Number(values.rounds);
const LOOPS = 8;
const BATCH = 25;
const LEASE_MS = 60_000;

const ENQUEUE_CASES = {
  plain: () => ({}),
  'seq-own-key': (loop, i) => ({ sequence: { key: `k${loop}:${i}` } }),
  'seq-per-caller': (loop) => ({ sequence: { key: `k${loop}` } }),
  'seq-one-key': () => ({ sequence: { key: 'one' } }),
};

const server = await postgres();
const dataSource = await openDataSource(server.url, LOOPS + 2);
const schemas = [];

async function freshStore(prefix) {
  await dataSource.query('CHECKPOINT');
  const schema = schemaName(prefix);
  schemas.push(schema);
  const store = new PostgresJobStore({ dataSource, schema });
  await store.migrate();
  return store;
}

async function enqueueCase(id) {
  const store = await freshStore('seqenq');
  const options = ENQUEUE_CASES[id];
  const perLoop = Math.ceil(ENQUEUES / LOOPS);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: LOOPS }, async (_, loop) => {
      for (let i = 0; i < perLoop; i++) await store.jobEnqueue({ job: { name: 'bench.seq', payload: { loop, i }, ...options(loop, i) } });
    }),
  );
  return (perLoop * LOOPS) / ((performance.now() - started) / 1000);
}

/** Claims and completes every job with LOOPS workers; returns jobs/s and the worst claim that found nothing due while jobs waited. */
async function drainCase(sequenced) {
  const store = await freshStore('seqdrain');
  for (let from = 0; from < JOBS; from += 1_000) {
    const jobs = Array.from({ length: Math.min(1_000, JOBS - from) }, (_, k) => {
      const n = from + k;
      return { name: 'bench.seq', payload: { n }, ...(sequenced ? { sequence: { key: `k${n % KEYS}` } } : {}) };
    });
    await store.jobEnqueueMany({ jobs });
  }
  let done = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: LOOPS }, async (_, loop) => {
      const workerId = `w${loop}`;
      while (done < JOBS) {
        const claimed = await store.jobClaim({ workerId, limit: BATCH, queues: ['default'], leaseMs: LEASE_MS });
        if (claimed.length === 0) {
          await new Promise((resolve) => setImmediate(resolve));
          continue;
        }
        await store.jobCompleteMany({ workerId, outcomes: claimed.map((job) => ({ jobId: job.id, attempt: job.attempt, kind: 'succeeded' })) });
        done += claimed.length;
      }
    }),
  );
  return JOBS / ((performance.now() - started) / 1000);
}

/** Median claim time (ms) of one due plain job, with `waiting` jobs waiting beside it: their turn in a sequence, or a parent. */
async function claimCase(waiting, how) {
  const store = await freshStore('seqclaim');
  const parent = waiting > 0 ? (await store.jobEnqueue({ job: { name: 'bench.parent', payload: {}, delayMs: 3_600_000 } })).id : null;
  for (let from = 0; from < waiting; from += 1_000) {
    const waits = (n) => (how === 'sequence' ? { delayMs: 3_600_000, sequence: { key: `k${n % KEYS}` } } : { dependsOn: [parent] });
    const jobs = Array.from({ length: Math.min(1_000, waiting - from) }, (_, k) => ({ name: 'bench.wait', payload: {}, ...waits(from + k) }));
    await store.jobEnqueueMany({ jobs });
  }
  // Statistics, and the pages the fill dirtied written out, so both cases time the claim alone.
  await dataSource.query(`ANALYZE ${store.naming.jobs}`);
  await dataSource.query('CHECKPOINT');
  const times = [];
  for (let i = 0; i < 200; i++) {
    await store.jobEnqueue({ job: { name: 'bench.plain', payload: { i } } });
    const started = performance.now();
    const [job] = await store.jobClaim({ workerId: 'w', limit: 1, queues: ['default'], leaseMs: LEASE_MS });
    times.push(performance.now() - started);
    await store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: job.id, attempt: job.attempt, kind: 'succeeded' }] });
  }
  return median(times);
}

const rates = {};
const push = (id, value) => (rates[id] ??= []).push(value);
for (let round = 0; round < ROUNDS; round++) {
  for (const id of ONLY.has('enqueue') ? Object.keys(ENQUEUE_CASES) : []) {
    const rate = await enqueueCase(id);
    push(`enqueue ${id}`, Math.round(rate));
    console.log(`  round ${round + 1} enqueue ${id}: ${Math.round(rate)} enqueues/s`);
  }
  for (const sequenced of ONLY.has('drain') ? [false, true] : []) {
    const id = `drain ${sequenced ? `${KEYS} sequences` : 'plain'}`;
    const rate = await drainCase(sequenced);
    push(id, Math.round(rate));
    console.log(`  round ${round + 1} ${id}: ${Math.round(rate)} jobs/s`);
  }
  for (const [waiting, how] of ONLY.has('claim') ? [[0, 'none'], [WAITING, 'sequence'], [WAITING, 'dependsOn']] : []) {
    const id = `claim beside ${waiting} waiting (${how})`;
    const ms = await claimCase(waiting, how);
    push(id, Number(ms.toFixed(2)));
    console.log(`  round ${round + 1} ${id}: ${ms.toFixed(2)} ms`);
  }
  for (const schema of schemas.splice(0)) await dataSource.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}
const ratio = (a, b) => (median(rates[a]) / median(rates[b])).toFixed(2);
for (const id of Object.keys(rates)) console.log(`${id}: median ${median(rates[id])} (${rates[id].join(', ')})`);
if (ONLY.has('enqueue')) for (const id of Object.keys(ENQUEUE_CASES)) console.log(`enqueue ${id}/plain = ${ratio(`enqueue ${id}`, 'enqueue plain')}`);
if (ONLY.has('drain')) console.log(`drain sequences/plain = ${ratio(`drain ${KEYS} sequences`, 'drain plain')}`);
if (ONLY.has('claim')) {
  for (const how of ['sequence', 'dependsOn']) console.log(`claim beside waiting (${how})/alone = ${ratio(`claim beside ${WAITING} waiting (${how})`, 'claim beside 0 waiting (none)')}`);
}
await dataSource.destroy();
await server.stop();
