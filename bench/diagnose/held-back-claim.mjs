// What a held-back backlog costs a claim (issue 35 item 1): the time of one claim of --batch normal
// jobs beside --held jobs that a limit holds back, against the same claim beside none, on
// PostgreSQL and SQLite. The held-back jobs are urgent (priority -10), so they come first in claim
// order; their key is capped at 1 and one of its jobs runs, so every one of them is held back. The
// claims take the normal jobs behind them and complete them (the completion is not timed). Before
// the timed claims, a parking pass runs claims until one fills its batch: the first claims after a
// backlog forms park it in its lane (claim-lanes.sql.ts), once; the pass's time is reported apart.
// Each line says how many jobs a claim took on average: a build whose claims stop at the held-back
// jobs takes fewer than --batch, and its pass ends at --max-seconds.
//
// Also the pickup delay the issue measured: 200 urgent jobs on a key capped at 1 and 200 normal
// jobs, a worker of concurrency 8 polling every second; how long until the first normal job
// starts, and until all 200 have.
//
// Point --dist at another build's dist/ (a checkout of the parent commit, built) to measure before
// and after in one run. --max-seconds bounds each timed case, for builds whose claim walks the backlog.
// Usage: node bench/diagnose/held-back-claim.mjs [--stores pg,sqlite] [--held 1000000] [--claims 200]
//   [--batch 32] [--dist dist] [--max-seconds 60] [--pickup] [--label after]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import { median, openDataSource, postgres, schemaName } from '../support.mjs';

const { values } = parseArgs({
  options: {
    stores: { type: 'string', default: 'pg,sqlite' },
    held: { type: 'string', default: '1000000' },
    claims: { type: 'string', default: '200' },
    batch: { type: 'string', default: '32' },
    dist: { type: 'string', default: 'dist' },
    'max-seconds': { type: 'string', default: '60' },
    pickup: { type: 'boolean', default: false },
    label: { type: 'string', default: '' },
  },
});
const HELD = Number(values.held);
const CLAIMS = Number(values.claims);
const BATCH = Number(values.batch);
const MAX_MS = Number(values['max-seconds']) * 1000;
const dist = resolve(values.dist);
const { PostgresJobStore, SqliteJobStore } = await import(pathToFileURL(join(dist, 'lib/store/index.js')).href);
const LEASE = 3_600_000;

/** Opens a fresh store of `kind`; `close` drops what it made. */
async function openStore(kind, pgUrl) {
  if (kind === 'pg') {
    const dataSource = await openDataSource(pgUrl, 4);
    const schema = schemaName('held');
    const store = new PostgresJobStore({ dataSource, schema });
    await store.migrate();
    return { store, close: async () => (await store.close(), await dataSource.query(`DROP SCHEMA "${schema}" CASCADE`), await dataSource.destroy()) };
  }
  const dir = mkdtempSync(join(tmpdir(), 'held-back-'));
  const dataSource = await new DataSource({ type: 'better-sqlite3', database: join(dir, 'jobs.db') }).initialize();
  const store = new SqliteJobStore({ dataSource });
  await store.migrate();
  return { store, close: async () => (await store.close(), await dataSource.destroy(), rmSync(dir, { recursive: true, force: true })) };
}

async function enqueueMany(store, count, job) {
  const tag = job.concurrencyKey ?? 'normal';
  for (let at = 0; at < count; at += 5_000) {
    const n = Math.min(5_000, count - at);
    await store.jobEnqueueMany({ jobs: Array.from({ length: n }, (_, i) => ({ name: 'bench.held', payload: { i: at + i, tag }, ...job })) });
  }
}

const claim = (store) => store.jobClaim({ workerId: 'w', limit: BATCH, queues: ['default'], leaseMs: LEASE });
const complete = (store, jobs) =>
  jobs.length === 0 ? null : store.jobCompleteMany({ workerId: 'w', outcomes: jobs.map((j) => ({ jobId: j.id, attempt: j.attempt, kind: 'succeeded' })) });

/** One case: the hot key capped at 1 with one job running, `held` more of its jobs, and normal jobs behind. */
async function claimCase(kind, pgUrl, held) {
  const { store, close } = await openStore(kind, pgUrl);
  try {
    await store.concurrencyLimitSet({ target: { key: 'hot' }, max: 1 });
    await enqueueMany(store, 1, { concurrencyKey: 'hot', priority: -10 });
    const [running] = await claim(store);
    if (running?.concurrencyKey !== 'hot') throw new Error('the hot key did not take its slot');
    const fillStart = performance.now();
    await enqueueMany(store, held, { concurrencyKey: 'hot', priority: -10 });
    await enqueueMany(store, (CLAIMS + 50) * BATCH, {});
    const fillMs = performance.now() - fillStart;
    // The parking pass: claims until one takes a full batch of normal jobs.
    const parkStart = performance.now();
    let parkClaims = 0;
    for (;;) {
      const jobs = await claim(store);
      parkClaims += 1;
      await complete(store, jobs);
      if (jobs.length === BATCH || performance.now() - parkStart > MAX_MS) break;
    }
    const parkMs = performance.now() - parkStart;
    const times = [];
    let taken = 0;
    const started = performance.now();
    for (let i = 0; i < CLAIMS && performance.now() - started < MAX_MS; i++) {
      const t0 = performance.now();
      const jobs = await claim(store);
      times.push(performance.now() - t0);
      taken += jobs.length;
      await complete(store, jobs);
    }
    times.sort((a, b) => a - b);
    return { held, fillMs, parkMs, parkClaims, claims: times.length, median: median(times), p95: times[Math.floor(times.length * 0.95)], taken };
  } finally {
    await close();
  }
}

/** The issue's pickup case, with a real worker node. */
async function pickupCase(kind, pgUrl) {
  const { WorkerNode, FunctionInvoker } = await import(pathToFileURL(join(dist, 'lib/worker/public-api.js')).href);
  const { store, close } = await openStore(kind, pgUrl);
  try {
    await store.concurrencyLimitSet({ target: { key: 'hot' }, max: 1 });
    await enqueueMany(store, 200, { concurrencyKey: 'hot', priority: -10 });
    await enqueueMany(store, 200, {});
    let first = null;
    let normals = 0;
    let done;
    const all = new Promise((r) => (done = r));
    const t0 = performance.now();
    const invoker = new FunctionInvoker({
      'bench.held': {
        handle: async (payload) => {
          if (payload.tag === 'normal') {
            first ??= performance.now() - t0;
            if (++normals === 200) done(performance.now() - t0);
          }
        },
      },
    });
    const node = new WorkerNode({ store, invoker, options: { concurrency: 8, claimBatchSize: 8, pollIntervalMs: 1_000 } });
    await node.start();
    const allMs = await Promise.race([all, new Promise((r) => setTimeout(() => r(null), MAX_MS))]);
    await node.stop();
    return { first, allMs };
  } finally {
    await close();
  }
}

const pg = values.stores.includes('pg') ? await postgres() : null;
const label = values.label ? `${values.label}: ` : '';
for (const kind of values.stores.split(',')) {
  if (values.pickup) {
    const p = await pickupCase(kind, pg?.url);
    console.log(`${label}${kind} pickup beside a capped key: first normal job ${p.first === null ? 'never' : `${Math.round(p.first)} ms`}, all 200 ${p.allMs === null ? `not within ${MAX_MS / 1000} s` : `${Math.round(p.allMs)} ms`}`);
    continue;
  }
  const none = await claimCase(kind, pg?.url, 0);
  const held = await claimCase(kind, pg?.url, HELD);
  const show = (c) =>
    `${c.claims} claims taking ${(c.taken / Math.max(1, c.claims)).toFixed(1)} of ${BATCH} jobs each, median ${c.median.toFixed(2)} ms, p95 ${c.p95.toFixed(2)} ms (prefill ${Math.round(c.fillMs)} ms; parking pass ${Math.round(c.parkMs)} ms in ${c.parkClaims} claims)`;
  console.log(`${label}${kind} beside 0 held-back: ${show(none)}`);
  console.log(`${label}${kind} beside ${HELD.toLocaleString('en-US')} held-back: ${show(held)}`);
  console.log(`${label}${kind} ratio held/none (median claim): ${(held.median / none.median).toFixed(2)}`);
}
await pg?.stop();
