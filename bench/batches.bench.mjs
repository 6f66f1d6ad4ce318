// What a batch costs (docs/batches.md), on PostgreSQL unless --store says mariadb (MARIADB_URL,
// default mysql://root@127.0.0.1:3306/test) or sqlite (a file in the temp directory), each case on
// a fresh schema, table prefix or file, rounds interleaved.
// Enqueue: JOBS plain jobs through enqueueMany, 1,000 per call, against one enqueueBatch of JOBS
//   jobs with three callbacks (3 × JOBS edges), in ms.
// Outcome writes: single-job outcome writes, timed one at a time:
//   plain     a job with no dependants;
//   child     a job of a JOBS-job batch with three callbacks, in the middle of the batch (each write
//             lowers three latches);
//   last      the batch's last job, whose write releases onComplete and onFailure and cancels onSuccess.
// Drain: JOBS jobs claimed and completed by LOOPS workers (claims of up to BATCH, one outcome write per
//   claim), plain or as one batch with three callbacks.
// Usage: node bench/batches.bench.mjs [--store postgres|mariadb|sqlite] [--jobs 10000] [--rounds 3] [--only enqueue,outcome,drain]
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import { MysqlJobStore, PostgresJobStore, SqliteJobStore } from '../dist/lib/index.js';
import { median, openDataSource, postgres, schemaName } from './support.mjs';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '3' },
    only: { type: 'string', default: 'enqueue,outcome,drain' },
    store: { type: 'string', default: 'postgres' },
  },
});
const STORE = values.store;
const ONLY = new Set(values.only.split(','));
const JOBS = Number(values.jobs);
const ROUNDS = Number(values.rounds);
const LOOPS = 8;
const BATCH = 25;
const SAMPLES = 200;
const LEASE_MS = 600_000;
const CALLBACKS = {
  onSuccess: { name: 'bench.batch.success', payload: {} },
  onComplete: { name: 'bench.batch.complete', payload: {} },
  onFailure: { name: 'bench.batch.failure', payload: {} },
};

const server = STORE === 'postgres' ? await postgres() : null;
const dataSource =
  STORE === 'postgres'
    ? await openDataSource(server.url, LOOPS + 2)
    : STORE === 'mariadb'
      ? await new DataSource({ type: 'mariadb', url: process.env.MARIADB_URL ?? 'mysql://root@127.0.0.1:3306/test', poolSize: LOOPS + 2 }).initialize()
      : null;
/** What each round drops when it ends: schemas, table prefixes, or SQLite stores and their files. */
const cleanups = [];

async function freshStore(prefix) {
  let store;
  if (STORE === 'postgres') {
    await dataSource.query('CHECKPOINT');
    const schema = schemaName(prefix);
    cleanups.push(() => dataSource.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
    store = new PostgresJobStore({ dataSource, schema });
  } else if (STORE === 'mariadb') {
    const tablePrefix = `${prefix}_${randomBytes(4).toString('hex')}_`;
    cleanups.push(async () => {
      const rows = await dataSource.query('SELECT table_name AS t FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE ?', [`${tablePrefix}%`]);
      if (rows.length > 0) await dataSource.query(`DROP TABLE ${rows.map((r) => `\`${r.t}\``).join(', ')}`);
    });
    store = new MysqlJobStore({ dataSource, tablePrefix, poolSize: LOOPS + 2 });
  } else {
    const file = join(tmpdir(), `${prefix}-${randomBytes(4).toString('hex')}.db`);
    const sqlite = await new DataSource({ type: 'better-sqlite3', database: file }).initialize();
    store = new SqliteJobStore({ dataSource: sqlite });
    cleanups.push(async () => {
      await sqlite.destroy();
      for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
    });
  }
  await store.migrate();
  // First, before its tables go: a MySQL store's own pool would keep the process alive.
  cleanups.unshift(() => store.close());
  return store;
}

const items = (count, from = 0) => Array.from({ length: count }, (_, k) => ({ name: 'bench.item', payload: { n: from + k } }));

async function writeBatch(store) {
  return store.jobEnqueueBatch({ jobs: items(JOBS), ...CALLBACKS });
}

async function writePlain(store) {
  for (let from = 0; from < JOBS; from += 1_000) await store.jobEnqueueMany({ jobs: items(Math.min(1_000, JOBS - from), from) });
}

async function enqueueCase(batched) {
  const store = await freshStore('batchenq');
  const started = performance.now();
  if (batched) await writeBatch(store);
  else await writePlain(store);
  return performance.now() - started;
}

/** Times single-job outcome writes of `SAMPLES` claimed jobs; returns their times in ms. */
async function timeOutcomes(store, jobs) {
  const times = [];
  for (const job of jobs) {
    const started = performance.now();
    await store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: job.id, attempt: job.attempt, kind: 'succeeded' }] });
    times.push(performance.now() - started);
  }
  return times;
}

async function claimAll(store) {
  const claimed = [];
  for (;;) {
    const jobs = await store.jobClaim({ workerId: 'w', limit: 1_000, queues: ['default'], leaseMs: LEASE_MS });
    if (jobs.length === 0) return claimed;
    claimed.push(...jobs);
  }
}

/** The median single outcome write of plain jobs, of the middle of a batch, and the batch's last job's write. */
async function outcomeCase() {
  const plainStore = await freshStore('batchout');
  await writePlain(plainStore);
  const plain = median(await timeOutcomes(plainStore, (await claimAll(plainStore)).slice(0, SAMPLES)));

  const store = await freshStore('batchout');
  const { callbacks } = await writeBatch(store);
  if (STORE === 'postgres') await dataSource.query(`ANALYZE ${store.naming.jobs}`);
  const claimed = await claimAll(store);
  const last = claimed.pop();
  const middle = claimed.splice(Math.floor(claimed.length / 2) - SAMPLES / 2, SAMPLES);
  for (let from = 0; from < claimed.length; from += 1_000) {
    const outcomes = claimed.slice(from, from + 1_000).map((job, i) => (from + i === 17 ? { jobId: job.id, attempt: job.attempt, kind: 'dead_lettered', error: 'bench' } : { jobId: job.id, attempt: job.attempt, kind: 'succeeded' }));
    await store.jobCompleteMany({ workerId: 'w', outcomes });
  }
  const child = median(await timeOutcomes(store, middle));
  const [lastMs] = await timeOutcomes(store, [last]);
  const released = await store.jobGet({ jobId: callbacks.onComplete });
  if (released.state !== 'scheduled') throw new Error(`the last job's write left onComplete ${released.state}`);
  return { plain, child, last: lastMs };
}

async function drainCase(batched) {
  const store = await freshStore('batchdrain');
  if (batched) await writeBatch(store);
  else await writePlain(store);
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
        const items = claimed.filter((job) => job.name === 'bench.item');
        await store.jobCompleteMany({ workerId, outcomes: claimed.map((job) => ({ jobId: job.id, attempt: job.attempt, kind: 'succeeded' })) });
        done += items.length;
      }
    }),
  );
  return JOBS / ((performance.now() - started) / 1000);
}

const rates = {};
const push = (id, value) => (rates[id] ??= []).push(value);
for (let round = 0; round < ROUNDS; round++) {
  for (const batched of ONLY.has('enqueue') ? [false, true] : []) {
    const id = `enqueue ${JOBS} ${batched ? 'as one batch' : 'plain'}`;
    const ms = await enqueueCase(batched);
    push(id, Math.round(ms));
    console.log(`  round ${round + 1} ${id}: ${Math.round(ms)} ms`);
  }
  if (ONLY.has('outcome')) {
    const { plain, child, last } = await outcomeCase();
    push('outcome write plain', Number(plain.toFixed(2)));
    push('outcome write batch child', Number(child.toFixed(2)));
    push('outcome write batch last', Number(last.toFixed(2)));
    console.log(`  round ${round + 1} outcome write ms: plain ${plain.toFixed(2)}, batch child ${child.toFixed(2)}, batch last ${last.toFixed(2)}`);
  }
  for (const batched of ONLY.has('drain') ? [false, true] : []) {
    const id = `drain ${batched ? 'one batch' : 'plain'}`;
    const rate = await drainCase(batched);
    push(id, Math.round(rate));
    console.log(`  round ${round + 1} ${id}: ${Math.round(rate)} jobs/s`);
  }
  for (const cleanup of cleanups.splice(0)) await cleanup();
}
const ratio = (a, b) => (median(rates[a]) / median(rates[b])).toFixed(2);
for (const id of Object.keys(rates)) console.log(`${id}: median ${median(rates[id])} (${rates[id].join(', ')})`);
if (ONLY.has('enqueue')) console.log(`enqueue batch/plain = ${ratio(`enqueue ${JOBS} as one batch`, `enqueue ${JOBS} plain`)}`);
if (ONLY.has('outcome')) {
  console.log(`outcome write batch child/plain = ${ratio('outcome write batch child', 'outcome write plain')}`);
  console.log(`outcome write batch last/plain = ${ratio('outcome write batch last', 'outcome write plain')}`);
}
if (ONLY.has('drain')) console.log(`drain batch/plain = ${ratio('drain one batch', 'drain plain')}`);
await dataSource?.destroy();
await server?.stop();
