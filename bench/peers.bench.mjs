// Side by side with graphile-worker 0.17.3, pg-boss 10.4.2 and BullMQ 6 (on PostgreSQL and on
// Redis) on one server of each: every PostgreSQL cell in a fresh database (CREATE DATABASE, dropped
// after), every Redis cell in an empty database index (FLUSHDB after), the same ~100-byte payload
// and no-op handler, at most 10 connections per process for every system. Cells of one workload run
// round by round with the systems interleaved, so a busy machine slows all of them alike.
// Usage: node bench/peers.bench.mjs [--quick] [--runs N] [--only drain,latency,...] [--variants ours-default,bullmq-pg-default,...]
//   [--drain-jobs N] [--drain-cap-s S] [--soak-variants ours-tuned,graphile-tuned] [--resume bench/results/peers-full.json,...]
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { fmt, median, postgres } from './support.mjs';
import { Server } from './peers/cell.mjs';
import { headline, sections, unsupported, variants } from './systems/index.mjs';
import { drainCell } from './workloads/drain.mjs';
import { enqueueCell, enqueueModes } from './workloads/enqueue.mjs';
import { latencyCell } from './workloads/latency.mjs';
import { retryStormCell } from './workloads/retry-storm.mjs';
import { crashCell } from './workloads/crash.mjs';
import { soakCell } from './workloads/soak.mjs';
import { ratiosSvg, summarize } from './peers/report.mjs';
import { printTables } from './peers/tables.mjs';

const { values } = parseArgs({
  options: { quick: { type: 'boolean', default: false }, runs: { type: 'string', default: '3' }, only: { type: 'string' }, variants: { type: 'string' }, 'drain-jobs': { type: 'string' }, 'drain-cap-s': { type: 'string' }, 'soak-variants': { type: 'string' }, resume: { type: 'string' } },
});
const QUICK = values.quick;
const RUNS = Number(values.runs);
const ONLY = values.only ? new Set(values.only.split(',')) : null;
/**
 * --only enqueue,drain,matrix,latency,retry,future,crash,soak runs a subset (latency needs drain).
 * --quick leaves the concurrency matrix out unless --only names it: no target reads it, and the
 * quick run has to stay under 10 minutes on 2 cores.
 */
const want = (section) => (ONLY ? ONLY.has(section) : !(QUICK && section === 'matrix'));
// The full drain cap is 120 s: only pg-boss at its defaults reaches it (10 work() calls of one job
// every 2 s run at a steady 5 jobs/s), and a longer window measures the same rate more slowly.
const P = QUICK
  ? { drain: 5_000, drainCap: 8_000, single: 300, multi: 1_000, bulk: 10_000, serial: 100, serialPgboss: 15, loadS: 3, storm: 1_000, stormCap: 60_000, futures: 20_000, crashCap: 8_000, soakS: 36, soakWindowS: 3 }
  : { drain: 100_000, drainCap: 120_000, single: 2_000, multi: 10_000, bulk: 100_000, serial: 1_000, serialPgboss: 100, loadS: 15, storm: 10_000, stormCap: 300_000, futures: 1_000_000, crashCap: 60_000, soakS: 600, soakWindowS: 10 };
if (values['drain-jobs']) P.drain = Number(values['drain-jobs']);
if (values['drain-cap-s']) P.drainCap = Number(values['drain-cap-s']) * 1_000;
// --variants narrows every section to these variants (enqueue: to their systems); a run so narrowed
// writes neither summary.json nor ratios.svg, as a run of some sections does not.
const VARIANTS = values.variants ? values.variants.split(',') : null;
for (const v of VARIANTS ?? []) if (!variants[v]) throw new Error(`--variants: no variant ${v}; known: ${Object.keys(variants).join(', ')}`);
// Systems whose server is not there (no Redis at REDIS_URL): left out of a run that did not name them.
const absent = new Set();
const chosen = (ids) => ids.filter((v) => (!VARIANTS || VARIANTS.includes(v)) && !absent.has(variants[v].system));
const PARTIAL = Boolean(ONLY || VARIANTS);
const mode = `${QUICK ? 'quick' : 'full'}${ONLY ? `-${[...ONLY].join('-')}` : ''}${VARIANTS ? '-variants' : ''}`;
const started = Date.now();
process.on('unhandledRejection', (e) => console.error('unhandled rejection:', e?.message ?? e));

const pgServer = await postgres();
const server = new Server(pgServer.url);
const meta = { mode, date: new Date().toISOString(), cores: cpus().length, postgres: await server.version(), server: pgServer.label, settings: await server.settings(), runs: RUNS, params: P, node: process.version, ...(VARIANTS ? { variants: VARIANTS } : {}) };
console.log(`peers bench (${mode}): ${meta.cores} cores, PostgreSQL ${meta.postgres} (${meta.server}), ${RUNS} runs per cell`);
console.log(`  server settings: ${Object.entries(meta.settings).map(([k, v]) => `${k}=${v}`).join(', ')}`);
// Redis only when a Redis variant runs; its persistence goes beside every Redis figure.
const runsRedis = (VARIANTS ?? Object.keys(variants)).some((v) => variants[v].system === 'bullmq-redis');
if (runsRedis) {
  try {
    meta.redis = await server.redis.describe();
    console.log(`  Redis ${meta.redis.version} at ${meta.redis.url}: save='${meta.redis.save}', appendonly=${meta.redis.appendonly}${meta.redis.keepsNothingOnDisk ? ' (keeps nothing on disk)' : ''}`);
  } catch (error) {
    if (VARIANTS) throw error;
    absent.add('bullmq-redis');
    console.warn(`  leaving out BullMQ on Redis: no Redis at ${server.redis.url} (${error.message})`);
  }
}
// Without autovacuum no system's dead tuples are ever reclaimed: every soak collapses and the
// recovery ratio measures the server, not the queue.
if (meta.settings.autovacuum === 'off') console.warn('  WARNING: autovacuum is off on this server; the soak and every long cell will measure that, not the queues.');

const results = { meta, enqueue: [], headline: [], matrix: [], latency: [], retry: [], future: [], crash: [], soak: [] };
// --resume a.json[,b.json]: take the sections these earlier results files already hold (a run that
// stopped part-way, or a section run on its own) and run only the others; meta.resumedFrom says so.
const sectionKey = { enqueue: 'enqueue', drain: 'headline', matrix: 'matrix', latency: 'latency', retry: 'retry', future: 'future', crash: 'crash', soak: 'soak' };
if (values.resume) {
  meta.resumedFrom = [];
  for (const file of values.resume.split(',')) {
    const earlier = JSON.parse(readFileSync(file, 'utf8'));
    const taken = Object.values(sectionKey).filter((key) => results[key].length === 0 && earlier[key]?.length > 0);
    for (const key of taken) results[key] = earlier[key];
    meta.resumedFrom.push({ file, date: earlier.meta.date, postgres: earlier.meta.postgres, server: earlier.meta.server, settings: earlier.meta.settings, sections: taken });
  }
}
const wanted = (section) => want(section) && results[sectionKey[section]].length === 0;
const log = (what, r) => console.log(`  ${what}: ${JSON.stringify(r).slice(0, 220)}`);
const save = () => {
  mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
  writeFileSync(new URL(`./results/peers-${mode}.json`, import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
};

// Other work shares this machine (a rebuild may briefly remove dist/): a failed cell is tried again.
async function retried(cell, ...args) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await cell(server, ...args);
    } catch (error) {
      if (attempt === 3) throw error;
      console.error(`  cell failed (${error.message.split('\n')[0]}); trying again`);
      await new Promise((resolve) => setTimeout(resolve, 5_000));
    }
  }
}

const SYSTEMS = sections.enqueue.filter((s) => !absent.has(s) && (!VARIANTS || VARIANTS.some((v) => variants[v].system === s)));
// A variant this build cannot run (ours-tuned-lean before the library has the lean finish) is left out, and said so.
const runnable = (ids) =>
  chosen(ids).filter((v) => {
    const why = unsupported(v);
    if (why) console.log(`  leaving out ${v}: ${why}`);
    return !why;
  });

if (wanted('enqueue')) {
  console.log('enqueue');
  for (const m of enqueueModes) {
    const jobs = m === 'single, 1 client' ? P.single : m === 'single, 16 clients' ? P.multi : P.bulk;
    for (let r = 0; r < RUNS; r++) {
      for (const s of SYSTEMS) {
        results.enqueue.push(await retried(enqueueCell, s, m, jobs));
        log(`${s} ${m}`, results.enqueue.at(-1).jobsPerSec);
      }
    }
  }
  save();
}

if (wanted('drain')) {
  console.log('drain, headline settings, 1 process');
  const drained = runnable(Object.keys(headline));
  for (let r = 0; r < RUNS; r++) {
    for (const v of drained) {
      results.headline.push(await retried(drainCell, v, { c: headline[v], jobs: P.drain, capMs: P.drainCap }));
      log(v, results.headline.at(-1));
    }
  }
  save();
}

if (wanted('matrix')) {
  console.log('drain, concurrency 10 and 50 per process, in 1 and 2 processes');
  const matrix = chosen(QUICK ? ['ours-tuned', 'graphile-tuned', 'pgboss-tuned'] : ['ours-default', 'ours-tuned', 'graphile-default', 'graphile-tuned', 'pgboss-tuned', 'raw']);
  for (let r = 0; r < RUNS; r++) {
    for (const processes of [1, 2]) {
      for (const c of [10, 50]) {
        for (const v of matrix) {
          if ((v === 'pgboss-tuned' || v === 'raw') && c === 50) continue; // their settings have no per-cell concurrency
          results.matrix.push(await retried(drainCell, v, { c, processes, jobs: P.drain, capMs: P.drainCap }));
          log(`${v} c=${c} p=${processes}`, results.matrix.at(-1).jobsPerSec);
        }
      }
    }
  }
  save();
}

if (wanted('latency')) {
  console.log('latency: idle (serial jobs), then open loop at 50% of the drain rate');
  const timed = chosen(sections.latency);
  for (let r = 0; r < RUNS; r++) {
    for (const v of timed) {
      const serial = v === 'pgboss-tuned' ? P.serialPgboss : P.serial;
      results.latency.push(await retried(latencyCell, v, headline[v], { serial }));
      log(`${v} idle`, results.latency.at(-1));
    }
  }
  for (let r = 0; r < RUNS && results.headline.length > 0; r++) {
    for (const v of timed.filter((t) => results.headline.some((c) => c.variant === t))) {
      const rate = 0.5 * median(results.headline.filter((c) => c.variant === v).map((c) => c.jobsPerSec));
      results.latency.push(await retried(latencyCell, v, headline[v], { rate, seconds: P.loadS }));
      log(`${v} load`, results.latency.at(-1));
    }
  }
  save();
}

if (wanted('retry')) {
  console.log('retry storm: every job fails twice, then succeeds');
  for (let r = 0; r < RUNS; r++) {
    for (const v of chosen(sections.retry)) {
      results.retry.push(await retried(retryStormCell, v, headline[v], P.storm, P.stormCap));
      log(v, results.retry.at(-1));
    }
  }
  save();
}

if (wanted('future')) {
  console.log(`drain with ${fmt(P.futures)} future-dated jobs present, against an empty table`);
  for (let r = 0; r < RUNS; r++) {
    for (const v of chosen(sections.future)) {
      for (const futures of [0, P.futures]) {
        results.future.push(await retried(drainCell, v, { c: headline[v], jobs: P.drain, futures, capMs: P.drainCap }));
        log(`${v} futures=${futures}`, results.future.at(-1).jobsPerSec);
      }
    }
  }
  save();
}

if (wanted('crash')) {
  console.log('crash recovery: SIGKILL a worker holding 100 jobs');
  for (let r = 0; r < RUNS; r++) {
    for (const v of chosen(sections.crash)) {
      results.crash.push(await retried(crashCell, v, P.crashCap));
      log(v, results.crash.at(-1));
    }
  }
  save();
}

if (wanted('soak')) {
  console.log(`soak: ${P.soakS} s, idle-in-transaction session in the middle third`);
  const soaked = values['soak-variants']?.split(',') ?? chosen(QUICK ? ['ours-tuned'] : ['ours-tuned', 'graphile-tuned']);
  for (const v of soaked) {
    results.soak.push(await retried(soakCell, v, headline[v], P.soakS, P.soakWindowS));
    log(v, results.soak.at(-1));
  }
  save();
}

// ---- report ----
meta.wallSeconds = (Date.now() - started) / 1_000;
const summary = { mode, future_jobs: P.futures, ...summarize(results) };
save();
if (!PARTIAL) {
  writeFileSync(new URL('./results/summary.json', import.meta.url), `${JSON.stringify({ meta, ...summary }, null, 2)}\n`);
  writeFileSync(new URL('./results/ratios.svg', import.meta.url), ratiosSvg(summary, `nestjs-durable-scheduler vs peers (${mode} run, ${meta.cores} cores, PostgreSQL ${meta.postgres.split(' ')[0]})`));
}
printTables(results, P, summary);
console.log(`\nwall time ${fmt(meta.wallSeconds)} s; results in bench/results/peers-${mode}.json${PARTIAL ? '' : ', summary.json, ratios.svg'}`);
await server.close();
await pgServer.stop();
