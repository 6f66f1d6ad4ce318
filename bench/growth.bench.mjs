// Growth: does the cost of the periodic statements, the listings, the drain, recurring schedules
// and many queues stay flat as the work grows? Issue 24's targets: every periodic and listing
// statement under 50 ms at 10 million retained jobs; the drain there ≥ 0.9× an empty table's;
// 1,000 queues ≥ 0.9× one queue. Figures are ratios to the small case, measured in one run.
//
// The retained jobs are prefilled with SQL (INSERT ... SELECT generate_series, triggers on), not
// enqueued and run through the library: see growth/prefill.mjs for the mix.
//
// Sections (--only a,b): statements (small and big), plans (big), drain (big vs empty),
// schedules (CPU per occurrence, catch-up after an outage), queues (1,000 vs 1).
// Usage: node bench/growth.bench.mjs [--lib DIR] [--rows 10000000] [--small 100000] [--runs 3]
//        [--only statements,plans,drain,schedules,queues] [--out FILE.json] [--plans FILE.txt]
// (every option: the parseArgs call below). It measures the build in DIR/dist (default: this checkout).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { drainOnce } from './growth/drain.mjs';
import { loadLibrary, systemOf } from './growth/library.mjs';
import { plansText, capturePlans } from './growth/plans.mjs';
import { census, prefill, prefillPlan, PREFILL_NAMES } from './growth/prefill.mjs';
import { backgroundPgCpu, catchUpRun, plainRun, scheduleRun } from './growth/schedules.mjs';
import { drainTable, perRoundRatio, scheduleTables, statementTable, targetsTable } from './growth/report.mjs';
import { statementList, TARGET_MS, timeStatement } from './growth/statements.mjs';
import { Server } from './peers/cell.mjs';
import { fmt, postgres } from './support.mjs';

const SECTIONS = ['statements', 'plans', 'drain', 'schedules', 'queues'];
const { values } = parseArgs({
  options: {
    lib: { type: 'string', default: new URL('..', import.meta.url).pathname },
    rows: { type: 'string', default: '10000000' },
    small: { type: 'string', default: '100000' },
    only: { type: 'string' },
    out: { type: 'string' },
    plans: { type: 'string' },
    runs: { type: 'string', default: '3' },
    // Statements: timed calls each (median), and the time after which a slow one stops at 3 calls.
    calls: { type: 'string', default: '9' },
    budget: { type: 'string', default: '120' },
    chunk: { type: 'string', default: '500000' },
    'drain-jobs': { type: 'string', default: '50000' },
    'queue-jobs': { type: 'string', default: '100000' },
    queues: { type: 'string', default: '1000' },
    schedules: { type: 'string', default: '10000' },
    'every-ms': { type: 'string', default: '10000' },
    warmup: { type: 'string', default: '15' },
    window: { type: 'string', default: '60' },
    outage: { type: 'string', default: '10' },
    'catchup-rate': { type: 'string', default: '200' },
    'catchup-cap': { type: 'string', default: '300' },
  },
});
const num = (name) => {
  const n = Number(values[name]);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number, got ${values[name]}.`);
  return n;
};
const only = values.only ? values.only.split(',').map((s) => s.trim()) : SECTIONS;
for (const s of only) if (!SECTIONS.includes(s)) throw new Error(`--only takes ${SECTIONS.join(', ')}; got ${s}.`);
const run = (s) => only.includes(s);
const ROWS = num('rows');
const SMALL = num('small');
const RUNS = num('runs');
const CALLS = num('calls');

const library = await loadLibrary(values.lib);
const short = (library.commit ?? 'unknown').slice(0, 7) + ((library.commit ?? '').endsWith('+dirty') ? '-dirty' : '');
const outFile = resolve(values.out ?? new URL(`./results/tmp/growth-${short}.json`, import.meta.url).pathname);
const plansFile = resolve(values.plans ?? new URL(`./results/tmp/growth-plans-${short}.txt`, import.meta.url).pathname);
const pgServer = await postgres();
const server = new Server(pgServer.url);
const system = systemOf(library);
const log = (line) => console.log(line);
const results = {
  meta: {
    date: new Date().toISOString(),
    lib: library.root,
    commit: library.commit,
    server: await server.version(),
    postgres: pgServer.label,
    settings: await server.settings(),
    node: process.version,
    sections: only,
    sizes: { rows: ROWS, small: SMALL },
    options: values,
    prefillIsSql: true,
    targets: { statementMs: TARGET_MS, drainRatio: 0.9, queuesRatio: 0.9 },
  },
};
// Databases this run created and has not dropped yet: an interrupted run drops them, since a
// prefilled one holds about 1 GB per million jobs.
const created = new Set();
async function database() {
  const db = await server.database(system);
  created.add(db.name);
  const drop = db.drop;
  db.drop = async () => {
    await drop();
    created.delete(db.name);
  };
  return db;
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    console.log(`\n${signal}: dropping the ${created.size} database(s) this run created`);
    for (const name of created) await server.admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
    process.exit(130);
  });
}
const save = () => {
  mkdirSync(dirname(outFile), { recursive: true });
  writeFileSync(outFile, `${JSON.stringify(results, null, 2)}\n`);
};
log(`growth bench: ${library.root} at ${library.commit}, PostgreSQL ${results.meta.server} (${pgServer.label}), sections ${only.join(', ')}`);
if (results.meta.settings.autovacuum === 'off') log('note: autovacuum is off on this server; the prefill ends with VACUUM ANALYZE, and each drain runs ANALYZE first.');

/** A fresh database migrated by the library under test and prefilled with `rows` jobs in SQL. */
async function prefilled(rows, label) {
  const db = await database();
  const admin = await library.open(db.url, { max: 2 });
  const query = (text, params) => admin.dataSource.query(text, params);
  try {
    const plan = prefillPlan(rows, CALLS);
    log(`\n## Prefill, ${label}: ${fmt(rows)} jobs, with SQL (INSERT ... SELECT generate_series, triggers on), in chunks of ${fmt(num('chunk'))}`);
    const t0 = performance.now();
    const done = await prefill({ query, store: admin.store, plan, chunk: num('chunk'), log });
    const seconds = (performance.now() - t0) / 1_000;
    const counted = await census(query);
    log(`prefilled in ${seconds.toFixed(0)} s (${Object.entries(done.phases).map(([k, v]) => `${k} ${(v / 1_000).toFixed(1)} s`).join(', ')})`);
    if (done.folded?.error) log(`note: folding the job counters failed (${done.folded.error}); stats read them unfolded.`);
    log(`jobs: ${Object.entries(counted.jobs).map(([k, v]) => `${k} ${fmt(v)}`).join(', ')}`);
    log(`history ${fmt(counted.history)} entries, ${fmt(counted.openEdges)} open and ${fmt(counted.settledEdges)} settled edges, ${counted.queues} queues, ${fmt(counted.schedules)} schedules, ${fmt(counted.audit)} audit entries; database ${fmt(counted.databaseMB)} MB (jobs ${fmt(counted.jobsMB)}, history ${fmt(counted.historyMB)})`);
    results.prefill ??= {};
    results.prefill[label] = { rows, seconds: Math.round(seconds), phases: done.phases, work: plan.work, folded: done.folded, census: counted };
    save();
    return { db, query, base: done.base, close: () => admin.close() };
  } catch (error) {
    await admin.close();
    await db.drop();
    throw error;
  }
}

async function dropDatabase(d) {
  await d.close();
  await d.db.drop();
}

async function timeStatements(d, label) {
  const { store, close } = await library.open(d.db.url, { max: 10 });
  const out = {};
  try {
    for (const statement of await statementList({ store, query: d.query, base: d.base })) {
      const r = await timeStatement(statement, { calls: CALLS, budgetMs: num('budget') * 1_000 });
      out[statement.name] = { kind: statement.kind, ...r };
      log(`  ${label} ${statement.name}: ${r.missing ? 'not in this build' : r.error ? `failed: ${r.error}` : `${r.ms.toFixed(2)} ms (${r.calls} calls, ${r.rows} rows)`}`);
    }
  } finally {
    await close();
  }
  return out;
}

/** One untimed drain in a fresh database, so neither side of the first round pays for warming Node and the server up. */
async function warmUp(jobs) {
  const db = await database();
  try {
    await drainOnce({ library, url: db.url, jobs: Math.min(jobs, 10_000) });
  } finally {
    await db.drop();
  }
}

const started = performance.now();
try {
  if (run('statements')) {
    results.statements = {};
    const small = await prefilled(SMALL, 'small');
    try {
      log(`\n## Statements, small (${fmt(SMALL)})`);
      results.statements.small = await timeStatements(small, 'small');
      save();
    } finally {
      await dropDatabase(small);
    }
  }
  if (run('statements') || run('plans') || run('drain')) {
    const big = await prefilled(ROWS, 'big');
    try {
      if (run('statements')) {
        log(`\n## Statements, big (${fmt(ROWS)})`);
        results.statements.big = await timeStatements(big, 'big');
        statementTable(results.statements, SMALL, ROWS);
        save();
      }
      if (run('plans')) {
        log(`\n## Plans at ${fmt(ROWS)} (auto_explain, ANALYZE and BUFFERS, on a connection of their own)`);
        const captured = await capturePlans({ library, url: big.db.url, query: big.query, base: big.base });
        mkdirSync(dirname(plansFile), { recursive: true });
        writeFileSync(plansFile, plansText(captured, `Plans at ${fmt(ROWS)} retained jobs: ${library.commit}, PostgreSQL ${results.meta.server}, ${results.meta.date}`));
        results.plans = { file: plansFile, statements: captured.map((c) => ({ name: c.name, plans: c.plans.length, error: c.error })) };
        log(`wrote ${captured.length} statements' plans to ${plansFile}`);
        save();
      }
      if (run('drain')) {
        const jobs = num('drain-jobs');
        log(`\n## Drain: ${fmt(jobs)} no-op jobs, one in-process WorkerNode (tuned), ${fmt(ROWS)} retained vs an empty table, ${RUNS} interleaved rounds`);
        await warmUp(jobs);
        const rounds = [];
        for (let i = 0; i < RUNS; i++) {
          const round = {};
          for (const cell of i % 2 === 0 ? ['empty', 'big'] : ['big', 'empty']) {
            if (cell === 'big') {
              round.big = await drainOnce({ library, url: big.db.url, jobs, otherNames: PREFILL_NAMES });
            } else {
              const empty = await database();
              try {
                round.empty = await drainOnce({ library, url: empty.url, jobs });
              } finally {
                await empty.drop();
              }
            }
            log(`  round ${i + 1} ${cell}: ${fmt(round[cell].jobsPerSec)} jobs/s${round[cell].capped ? ' (capped)' : ''}`);
          }
          rounds.push(round);
        }
        results.drain = { jobs, rounds, ratio: +perRoundRatio(rounds, 'empty', 'big').toFixed(3) };
        drainTable(`Drain of ${fmt(jobs)}: ${fmt(ROWS)} retained jobs vs an empty table`, rounds, 'empty', 'big', ['empty', `${fmt(ROWS)} retained`]);
        save();
      }
    } finally {
      await dropDatabase(big);
    }
  }
  if (run('queues')) {
    const jobs = num('queue-jobs');
    const count = num('queues');
    const names = Array.from({ length: count }, (_, k) => `q${k}`);
    log(`\n## Many queues: ${fmt(jobs)} jobs over ${fmt(count)} queues (one node serving all) vs one queue, ${RUNS} interleaved rounds`);
    await warmUp(jobs);
    const rounds = [];
    for (let i = 0; i < RUNS; i++) {
      const round = {};
      for (const cell of i % 2 === 0 ? ['one', 'many'] : ['many', 'one']) {
        const db = await database();
        try {
          round[cell] =
            cell === 'one'
              ? await drainOnce({ library, url: db.url, jobs })
              : await drainOnce({ library, url: db.url, jobs, queues: names, queueOf: (k) => names[k % count] });
        } finally {
          await db.drop();
        }
        log(`  round ${i + 1} ${cell === 'one' ? '1 queue' : `${fmt(count)} queues`}: ${fmt(round[cell].jobsPerSec)} jobs/s${round[cell].capped ? ' (capped)' : ''}`);
      }
      rounds.push(round);
    }
    results.queues = { jobs, queues: count, rounds, ratio: +perRoundRatio(rounds, 'one', 'many').toFixed(3) };
    drainTable(`Drain of ${fmt(jobs)}: ${fmt(count)} queues vs 1`, rounds, 'one', 'many', ['1 queue', `${fmt(count)} queues`]);
    save();
  }
  if (run('schedules')) {
    const count = num('schedules');
    const everyMs = num('every-ms');
    const rate = Math.round((count * 1_000) / everyMs);
    const warmupMs = num('warmup') * 1_000;
    const windowMs = num('window') * 1_000;
    log(`\n## Schedules: ${fmt(count)} every ${everyMs / 1_000} s (${fmt(rate)} occurrences/s) vs plain jobs at the same rate; warm-up ${warmupMs / 1_000} s, window ${windowMs / 1_000} s`);
    const background = await backgroundPgCpu();
    log(`  PostgreSQL CPU with this bench idle: ${background ?? '–'} ms/s${background > 50 ? ' (other work on the machine: it inflates every PostgreSQL CPU figure below)' : ''}`);
    const plainDb = await database();
    try {
      results.schedules = { backgroundPgCpuMsPerSec: background, plain: await plainRun({ library, url: plainDb.url, rate, warmupMs, windowMs }) };
    } finally {
      await plainDb.drop();
    }
    const plain = results.schedules.plain;
    log(`  plain: ${fmt(plain.rate)} jobs/s, ${plain.totalCpuMs ?? plain.nodeCpuMs} ms CPU per job`);
    if (plain.rate < 0.9 * rate) log(`  note: the producer reached ${fmt(plain.rate)} of ${fmt(rate)} jobs/s (each enqueue commits on its own); the per-job figures are at that rate.`);
    save();
    const db = await database();
    try {
      results.schedules.recurring = await scheduleRun({ library, url: db.url, count, everyMs, warmupMs, windowMs, log });
      const r = results.schedules.recurring;
      log(`  schedules: ${fmt(r.mintedPerSec)} occurrences/s, ${r.totalCpuMs ?? r.nodeCpuMs} ms CPU per occurrence`);
      save();
      const outageMs = num('outage') * 60_000;
      log(`\n## Catch-up after a ${outageMs / 60_000}-minute outage, plain jobs arriving at ${num('catchup-rate')}/s`);
      results.schedules.catchUp = await catchUpRun({ library, url: db.url, outageMs, rate: num('catchup-rate'), capMs: num('catchup-cap') * 1_000, log });
    } finally {
      await db.drop();
    }
    scheduleTables(results.schedules, num('catchup-cap'));
    save();
  }
} finally {
  results.meta.minutes = +((performance.now() - started) / 60_000).toFixed(1);
  save();
  await server.close();
  await pgServer.stop();
}

targetsTable(results, ROWS);
log(`\nresults in ${outFile} (${results.meta.minutes} minutes)`);
