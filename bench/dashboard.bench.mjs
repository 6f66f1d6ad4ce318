// Dashboard pages at a million jobs: how long each server-rendered page takes on PostgreSQL with
// 1,000,000 jobs in the table (the dashboard issue's target: every page under 200 ms there).
//
// A fresh schema in DATABASE_URL's database is migrated by the library under test (`--lib DIR`,
// its dist/), prefilled with SQL (dashboard/prefill.mjs has the mix), its counts folded by the
// store's own fold and checked against a count of the table, then ANALYZEd. The standalone
// dashboard server (startDashboardServer) serves it on 127.0.0.1, and each page is fetched over
// HTTP, its whole body read: `--warmup` untimed rounds, then `--samples` rounds, every page once
// per round in turn, so load from elsewhere on the machine falls on all pages alike. Last, each
// page is fetched once more through a second server whose connections run auto_explain, and the
// plans (EXPLAIN ANALYZE, BUFFERS) of every statement each page ran go to `--plans`.
//
// Usage: node bench/dashboard.bench.mjs [--lib DIR] [--jobs 1000000] [--samples 20] [--warmup 3]
//        [--out FILE.json] [--plans FILE.txt] [--keep]
// The page list is dashboard/pages.mjs (one line per page).
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { census, FULL_KEY, FULL_QUEUE, PAUSED_QUEUE, prefill, prefillPlan, tablesOf } from './dashboard/prefill.mjs';
import { findTargets, PAGES, READS } from './dashboard/pages.mjs';
import { loadLibrary } from './growth/library.mjs';
import { foldCounts } from './growth/prefill.mjs';
import { percentile } from './peers/cell.mjs';
import { fmt, postgres, schemaName, table } from './support.mjs';

const { values } = parseArgs({
  options: {
    lib: { type: 'string', default: new URL('..', import.meta.url).pathname },
    jobs: { type: 'string', default: '1000000' },
    samples: { type: 'string', default: '20' },
    warmup: { type: 'string', default: '3' },
    budget: { type: 'string', default: '200' },
    chunk: { type: 'string', default: '250000' },
    schedules: { type: 'string', default: '1000' },
    audit: { type: 'string', default: '10000' },
    out: { type: 'string' },
    plans: { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
});
const num = (name) => {
  const n = Number(values[name]);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive integer, got ${values[name]}.`);
  return n;
};
const BUDGET_MS = num('budget');
const log = (line) => console.log(line);

const library = await loadLibrary(values.lib);
const dashboardEntry = join(library.root, 'dist/lib/dashboard/index.js');
const { startDashboardServer } = await import(pathToFileURL(dashboardEntry).href);
const short = (library.commit ?? 'unknown').slice(0, 7) + ((library.commit ?? '').endsWith('+dirty') ? '-dirty' : '');
const outFile = resolve(values.out ?? new URL(`./results/tmp/dashboard-pages-${short}.json`, import.meta.url).pathname);
const plansFile = resolve(values.plans ?? new URL(`./results/tmp/dashboard-plans-${short}.txt`, import.meta.url).pathname);
// The machine's PostgreSQL unless told otherwise (the issue's figure is for PostgreSQL there).
process.env.DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/test';
const pg = await postgres();
const schema = schemaName('dash_bench');
const t = tablesOf(schema);
const results = {
  meta: {
    date: new Date().toISOString(),
    lib: library.root,
    commit: library.commit,
    postgres: pg.label,
    node: process.version,
    schema,
    options: values,
    budgetMs: BUDGET_MS,
    loadavgBefore: loadavg().map((x) => +x.toFixed(2)),
  },
};
const save = () => {
  mkdirSync(dirname(outFile), { recursive: true });
  writeFileSync(outFile, `${JSON.stringify(results, null, 2)}\n`);
};

const admin = await library.open(pg.url, { max: 2, store: { schema } });
const query = (text, params) => admin.dataSource.query(text, params);
const dropSchema = () => query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    if (!values.keep) {
      console.log(`\n${signal}: dropping schema ${schema}`);
      await dropSchema().catch(() => {});
    }
    process.exit(130);
  });
}

/** Fetches `url` and reads its whole body; returns the milliseconds, status and body. */
async function fetchPage(url) {
  const t0 = performance.now();
  const res = await fetch(url);
  const body = Buffer.from(await res.arrayBuffer());
  return { ms: performance.now() - t0, status: res.status, body };
}

/** The overview's totals, read off its cards, so the counts it shows can be checked against the table. */
function overviewTotals(html) {
  const totals = {};
  for (const m of html.matchAll(/<span class="value">([^<]*)<\/span><span class="label">([^<]*)<\/span>/g)) totals[m[2]] = m[1];
  return totals;
}

const AUTO_EXPLAIN = [
  '-c session_preload_libraries=auto_explain',
  '-c auto_explain.log_min_duration=0',
  '-c auto_explain.log_analyze=on',
  '-c auto_explain.log_buffers=on',
  '-c auto_explain.log_nested_statements=on',
  '-c client_min_messages=log',
].join(' ');

/** One fetch of every page, and one call of every read, through a store whose connections explain every statement. */
async function capturePlans(pages, reads) {
  const explaining = await library.open(pg.url, { max: 10, store: { schema }, pgOptions: AUTO_EXPLAIN });
  const notices = [];
  const pool = explaining.dataSource.driver.master;
  const listen = (client) => client.on('notice', (n) => n.message?.startsWith('duration:') && notices.push(n.message));
  pool.on('connect', listen);
  for (const client of pool._clients ?? []) listen(client);
  const server = await startDashboardServer({ store: explaining.store, logError: (line) => log(`  (plans) ${line}`) });
  const captured = [];
  const statements = () =>
    notices.map((text) => {
      const ms = Number(/^duration: ([\d.]+) ms/.exec(text)?.[1]);
      const sql = (/Query Text: ([\s\S]*?)\n(?=\S)/.exec(text)?.[1] ?? '').replace(/\s+/g, ' ').trim();
      return { ms, sql: sql.slice(0, 160), text };
    });
  try {
    for (const page of pages) {
      notices.length = 0;
      const r = await fetchPage(server.url + page.path);
      captured.push({ name: page.name, path: page.path, status: r.status, statements: statements() });
    }
    for (const read of reads) {
      notices.length = 0;
      await read.run(explaining.store);
      captured.push({ name: read.name, path: '(store read)', statements: statements() });
    }
  } finally {
    await server.close();
    await explaining.close();
  }
  return captured;
}

function plansText(captured, heading) {
  const parts = [`# ${heading}`, ''];
  for (const { name, path, statements } of captured) {
    const total = statements.reduce((a, s) => a + s.ms, 0);
    parts.push(`## ${name} (${path}): ${statements.length} statements, ${total.toFixed(1)} ms in them under auto_explain`, '');
    parts.push('```', ...(statements.length ? statements : [{ text: '(no plan logged)' }]).flatMap((s) => [s.text.trimEnd(), '']), '```', '');
  }
  return parts.join('\n');
}

const started = performance.now();
let dashboard;
let store;
try {
  log(`dashboard bench: ${library.root} at ${library.commit}; ${pg.label}; schema ${schema}`);
  await admin.store.migrate();
  const [{ server_version: version }] = await query('SHOW server_version');
  const settings = await query(`SELECT name, setting FROM pg_settings WHERE name IN ('autovacuum', 'shared_buffers', 'work_mem', 'jit', 'random_page_cost', 'effective_cache_size') ORDER BY name`);
  results.meta.server = version;
  results.meta.settings = Object.fromEntries(settings.map((r) => [r.name, r.setting]));
  log(`PostgreSQL ${version}, ${Object.entries(results.meta.settings).map(([k, v]) => `${k}=${v}`).join(', ')}`);

  // The prefill: jobs, schedules and audit in SQL; then what an operator did, through the store.
  const plan = prefillPlan({ jobs: num('jobs'), schedules: num('schedules'), audit: num('audit') });
  log(`\n## Prefill: ${fmt(plan.jobs)} jobs with SQL, chunks of ${fmt(num('chunk'))}`);
  const t0 = performance.now();
  const done = await prefill({ query, t, plan, chunk: num('chunk'), log });
  const op = { actor: 'bench' };
  await admin.store.queuePause({ queue: PAUSED_QUEUE, ...op });
  // Two full limits (as many slots as running jobs hold) and two with room.
  const [{ q: heldQ, k: heldK }] = await query(
    `SELECT count(*) FILTER (WHERE queue = $1)::int AS q, count(*) FILTER (WHERE concurrency_key = $2)::int AS k FROM ${t.jobs} WHERE state = 'running'`,
    [FULL_QUEUE, FULL_KEY],
  );
  const limits = [
    [{ queue: FULL_QUEUE }, heldQ],
    [{ key: FULL_KEY }, heldK],
    [{ queue: 'reports' }, 50],
    [{ key: 'tenant-2' }, 20],
  ];
  for (const [target, max] of limits) await admin.store.concurrencyLimitSet({ target, max, ...op });
  const folded = await foldCounts(admin.store);
  if (folded?.error) throw new Error(`folding the counts failed: ${folded.error}`);
  const t1 = performance.now();
  for (const table of ['jobs', 'job_history', 'dependencies', 'schedules', 'audit_log', 'concurrency_limits', 'concurrency_slots', 'job_counts', 'job_count_deltas', 'queues']) {
    await query(`VACUUM (ANALYZE) "${schema}"."${table}"`);
  }
  await query('CHECKPOINT');
  done.phases.fold = folded?.ms ?? null;
  done.phases.vacuumAnalyze = Math.round(performance.now() - t1);
  const seconds = (performance.now() - t0) / 1_000;
  const counted = await census(query, t);
  log(`prefilled in ${seconds.toFixed(0)} s (${Object.entries(done.phases).map(([k, v]) => `${k} ${(v / 1_000).toFixed(1)} s`).join(', ')})`);
  log(`jobs: ${Object.entries(counted.jobs).map(([k, v]) => `${k} ${fmt(v)}`).join(', ')}; ${counted.queues} queues`);
  log(`history ${fmt(counted.history)} entries, ${fmt(counted.openEdges)} open and ${fmt(counted.settledEdges)} settled edges, ${fmt(counted.schedules)} schedules, ${fmt(counted.audit)} audit entries, ${fmt(counted.finishedLastHour)} finished in the last hour; jobs ${counted.jobsMB} MB, history ${counted.historyMB} MB`);
  results.prefill = { seconds: Math.round(seconds), phases: done.phases, segments: plan.segments, limits: limits.map(([target, max]) => ({ ...target, max })), folded, census: counted };

  // The counts the overview shows are the store's own; they must equal a count of the table.
  const stats = await admin.store.jobStats();
  const kept = new Map(stats.counts.map((c) => [`${c.queue}/${c.state}`, c.count]));
  const wrong = counted.perQueueState.filter((c) => kept.get(`${c.queue}/${c.state}`) !== c.count);
  if (wrong.length > 0 || kept.size !== counted.perQueueState.length) {
    throw new Error(`the store's counts differ from the table's: ${JSON.stringify(wrong.slice(0, 5))} (${kept.size} kept pairs, ${counted.perQueueState.length} counted)`);
  }
  log(`counts: the store's ${kept.size} (queue, state) counts equal the table's`);
  save();

  // The dashboard, on a store of its own as an app would have it.
  const opened = await library.open(pg.url, { max: 10, store: { schema } });
  store = opened;
  dashboard = await startDashboardServer({ store: opened.store, logError: (line) => log(`  ${line}`) });
  const targets = await findTargets({ query, t, store: opened.store });
  const pages = PAGES.map((p) => ({ name: p.name, path: p.path(targets) }));
  results.targets = targets;

  const overview = await fetchPage(dashboard.url + '/');
  const shown = overviewTotals(overview.body.toString('utf8'));
  const expected = { Running: counted.jobs.running, Scheduled: counted.jobs.scheduled, 'Awaiting parents': counted.jobs.awaiting_parents, 'Dead-lettered': counted.jobs.dead_lettered };
  const mismatched = Object.entries(expected).filter(([label, n]) => Number(String(shown[label]).replace(/\D/g, '')) !== n);
  results.overviewTotals = { shown, expected };
  if (mismatched.length > 0) throw new Error(`the overview shows ${JSON.stringify(shown)}, the table holds ${JSON.stringify(expected)}`);
  log(`overview totals: ${Object.entries(shown).map(([k, v]) => `${k} ${v}`).join(', ')} (the table's counts)`);

  log(`\n## Pages: ${pages.length} pages and ${READS.length} store read(s), ${num('warmup')} warm-up rounds, then ${num('samples')} rounds, each page once per round`);
  const timings = new Map([...pages, ...READS].map((p) => [p.name, { ms: [], status: new Set(), bytes: 0 }]));
  for (let round = 0; round < num('warmup') + num('samples'); round++) {
    const timed = round >= num('warmup');
    for (const page of pages) {
      const r = await fetchPage(dashboard.url + page.path);
      const entry = timings.get(page.name);
      entry.status.add(r.status);
      entry.bytes = r.body.length;
      if (r.status !== 200) throw new Error(`${page.name} (${page.path}) answered ${r.status}: ${r.body.toString('utf8').replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').slice(0, 300)}`);
      if (timed) entry.ms.push(r.ms);
    }
    for (const read of READS) {
      const t2 = performance.now();
      await read.run(opened.store);
      if (timed) timings.get(read.name).ms.push(performance.now() - t2);
    }
  }
  const summary = (name, path) => {
    const { ms, bytes } = timings.get(name);
    const p50 = percentile(ms, 50);
    const p95 = percentile(ms, 95);
    return { name, path, medianMs: +p50.toFixed(2), p95Ms: +p95.toFixed(2), maxMs: +Math.max(...ms).toFixed(2), bytes, over: p95 > BUDGET_MS, samples: ms.map((x) => +x.toFixed(2)) };
  };
  results.pages = pages.map((p) => summary(p.name, p.path));
  results.reads = READS.map((r) => ({ ...summary(r.name, null), bytes: undefined }));
  results.meta.loadavgAfter = loadavg().map((x) => +x.toFixed(2));
  save();

  log(`\n## Plans: every page once more through a server whose connections run auto_explain`);
  const captured = await capturePlans(pages, READS);
  mkdirSync(dirname(plansFile), { recursive: true });
  writeFileSync(plansFile, plansText(captured, `Dashboard pages' statements at ${fmt(counted.totalJobs)} jobs: ${library.commit}, PostgreSQL ${version}, ${results.meta.date}`));
  for (const c of captured) {
    const page = [...results.pages, ...results.reads].find((p) => p.name === c.name);
    const slowest = [...c.statements].sort((a, b) => b.ms - a.ms)[0];
    page.statements = c.statements.length;
    page.slowestStatement = slowest ? { ms: +slowest.ms.toFixed(2), sql: slowest.sql } : null;
  }
  results.plans = plansFile;
  save();

  const ms = (x) => (x < 10 ? x.toFixed(1) : fmt(x));
  log(`\n#### Dashboard pages at ${fmt(counted.totalJobs)} jobs: ms per request (client-timed, whole body), ${num('samples')} samples; target < ${BUDGET_MS} ms\n`);
  table(
    ['Page', 'median', 'p95', 'KB', 'statements', `< ${BUDGET_MS} ms`],
    [
      ...results.pages.map((p) => [`${p.name} \`${p.path.length > 40 ? `${p.path.slice(0, 38)}…` : p.path}\``, ms(p.medianMs), ms(p.p95Ms), fmt(p.bytes / 1024, 1), p.statements ?? '–', p.over ? '**no**' : 'yes']),
      ...results.reads.map((r) => [r.name, ms(r.medianMs), ms(r.p95Ms), '–', r.statements ?? '–', r.over ? '**no**' : 'yes']),
    ],
  );
  const over = results.pages.filter((p) => p.over);
  const overReads = results.reads.filter((r) => r.over);
  if (overReads.length) log(`\nstore reads over ${BUDGET_MS} ms (p95), : ${overReads.map((r) => `${r.name} (${ms(r.p95Ms)} ms; slowest statement ${r.slowestStatement?.ms} ms under auto_explain)`).join('; ')}`);
  log(over.length ? `\nOVER ${BUDGET_MS} ms (p95): ${over.map((p) => `${p.name} (${ms(p.p95Ms)} ms; slowest statement ${p.slowestStatement?.ms} ms: ${p.slowestStatement?.sql})`).join('; ')}` : `\nEvery page's p95 is under ${BUDGET_MS} ms.`);
} finally {
  results.meta.minutes = +((performance.now() - started) / 60_000).toFixed(1);
  save();
  await dashboard?.close();
  await store?.close();
  if (values.keep) log(`kept schema ${schema} (--keep); drop it with: DROP SCHEMA "${schema}" CASCADE`);
  else await dropSchema();
  await admin.close();
  await pg.stop();
}
log(`\nresults in ${outFile}, plans in ${plansFile} (${results.meta.minutes} minutes)`);
