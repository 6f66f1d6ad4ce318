// Dashboard pages at a million jobs on MariaDB: dashboard.bench.mjs's measurement for the MySQL
// store. A fresh database `dash_bench_<random>` on MARIADB_URL's server is migrated by this
// checkout's dist/, prefilled with SQL (dashboard/prefill-mysql.mjs, prefill.mjs's mix), its counts
// checked against a count of the table, then ANALYZEd. The standalone dashboard server serves it,
// and each page is fetched over HTTP, its whole body read: `--warmup` untimed rounds, then
// `--samples` rounds, every page once per round in turn. Last, each page and read runs once more
// with every statement captured (text, values, time), and the statements of the slow ones (the
// reads, pages over budget, statements over `--slow` ms) go to `--plans` with ANALYZE FORMAT=JSON.
//
// Usage: npm run build && node bench/dashboard-mariadb.bench.mjs [--jobs 1000000] [--samples 20]
//        [--warmup 3] [--chunk 100000] [--out FILE.json] [--plans FILE.txt] [--keep]
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import mysql2 from 'mysql2';
import { DataSource } from 'typeorm';
import { MysqlJobStore } from '../dist/lib/index.js';
import { startDashboardServer } from '../dist/lib/dashboard/index.js';
import { FULL_KEY, FULL_QUEUE, PAUSED_QUEUE, prefillPlan } from './dashboard/prefill.mjs';
import { censusMysql, findTargetsMysql, prefillMysql, tablesOfMysql } from './dashboard/prefill-mysql.mjs';
import { PAGES, READS } from './dashboard/pages.mjs';
import { percentile } from './peers/cell.mjs';
import { fmt, table } from './support.mjs';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '1000000' },
    samples: { type: 'string', default: '20' },
    warmup: { type: 'string', default: '3' },
    budget: { type: 'string', default: '200' },
    chunk: { type: 'string', default: '100000' },
    schedules: { type: 'string', default: '1000' },
    audit: { type: 'string', default: '10000' },
    slow: { type: 'string', default: '50' },
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
const stampName = new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19);
const outFile = resolve(values.out ?? new URL(`./results/tmp/dashboard-mariadb-${stampName}.json`, import.meta.url).pathname);
const plansFile = resolve(values.plans ?? new URL(`./results/tmp/dashboard-mariadb-plans-${stampName}.txt`, import.meta.url).pathname);

const serverUrl = new URL(process.env.MARIADB_URL ?? 'mysql://root@127.0.0.1:3306/test');
const database = `dash_bench_${randomBytes(4).toString('hex')}`;
const dbUrl = new URL(serverUrl);
dbUrl.pathname = `/${database}`;
const results = { meta: { date: new Date().toISOString(), node: process.version, database, options: values, budgetMs: BUDGET_MS, loadavgBefore: loadavg().map((x) => +x.toFixed(2)) } };
const save = () => {
  mkdirSync(dirname(outFile), { recursive: true });
  writeFileSync(outFile, `${JSON.stringify(results, null, 2)}\n`);
};

const server = await new DataSource({ type: 'mariadb', url: serverUrl.href, poolSize: 2 }).initialize();
await server.query(`CREATE DATABASE \`${database}\``);
const dropDatabase = () => server.query(`DROP DATABASE IF EXISTS \`${database}\``);
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    if (!values.keep) {
      console.log(`\n${signal}: dropping database ${database}`);
      await dropDatabase().catch(() => {});
    }
    process.exit(130);
  });
}

// Statement capture: every query a mysql2 connection sends while `capture` is set, with its values and time.
let capture = null;
let proto = mysql2.Connection.prototype;
while (proto && !Object.hasOwn(proto, 'query')) proto = Object.getPrototypeOf(proto);
const sendQuery = proto.query;
proto.query = function (...args) {
  if (!capture) return sendQuery.apply(this, args);
  const [sql, vals] = args;
  const text = typeof sql === 'string' ? sql : sql.sql;
  const params = typeof vals === 'function' ? sql.values : vals;
  const entry = { sql: mysql2.format(text, params ?? []), ms: null };
  capture.push(entry);
  const at = args.findLastIndex((a) => typeof a === 'function');
  const t0 = performance.now();
  if (at >= 0) {
    const done = args[at];
    args[at] = function (...r) {
      entry.ms = performance.now() - t0;
      return done.apply(this, r);
    };
  }
  return sendQuery.apply(this, args);
};

async function fetchPage(url) {
  const t0 = performance.now();
  const res = await fetch(url);
  const body = Buffer.from(await res.arrayBuffer());
  return { ms: performance.now() - t0, status: res.status, body };
}

function overviewTotals(html) {
  const totals = {};
  for (const m of html.matchAll(/<span class="value">([^<]*)<\/span><span class="label">([^<]*)<\/span>/g)) totals[m[2]] = m[1];
  return totals;
}

/** ANALYZE FORMAT=JSON of each SELECT of a captured script, run in order on `conn` so its session variables are set. */
async function analyzeScript(conn, sql) {
  const out = [];
  for (const statement of sql.split(/;\n/)) {
    const s = statement.trim();
    try {
      if (/^SELECT\b/i.test(s)) {
        const [rows] = await conn.query(`ANALYZE FORMAT=JSON ${s}`);
        out.push({ sql: s, analyze: JSON.parse(rows[0].ANALYZE) });
      }
      if (!/^SELECT\b/i.test(s) || /\bINTO @/i.test(s)) await conn.query(s);
    } catch (error) {
      out.push({ sql: s, error: String(error.message) });
    }
  }
  return out;
}

const started = performance.now();
let dashboard;
let appDataSource;
let appStore;
let dataSource;
try {
  const [v] = await server.query(
    `SELECT VERSION() AS version, @@innodb_buffer_pool_size AS innodb_buffer_pool_size, @@innodb_flush_log_at_trx_commit AS innodb_flush_log_at_trx_commit,
            @@innodb_log_file_size AS innodb_log_file_size, @@use_stat_tables AS use_stat_tables, @@optimizer_use_condition_selectivity AS optimizer_use_condition_selectivity`,
  );
  results.meta.server = v;
  log(`dashboard bench (MariaDB): database ${database}; ${Object.entries(v).map(([k, x]) => `${k}=${x}`).join(', ')}`);
  dataSource = await new DataSource({ type: 'mariadb', url: dbUrl.href, poolSize: 4 }).initialize();
  const admin = new MysqlJobStore({ dataSource, poolSize: 4 });
  const query = (text, params) => dataSource.query(text, params);
  await admin.migrate();
  const t = tablesOfMysql(admin.naming);

  const plan = prefillPlan({ jobs: num('jobs'), schedules: num('schedules'), audit: num('audit') });
  log(`\n## Prefill: ${fmt(plan.jobs)} jobs with SQL, chunks of ${fmt(num('chunk'))}`);
  const t0 = performance.now();
  const done = await prefillMysql({ query, t, plan, chunk: num('chunk'), log });
  const op = { actor: 'bench' };
  await admin.queuePause({ queue: PAUSED_QUEUE, ...op });
  const [{ q: heldQ, k: heldK }] = await query(
    `SELECT CAST(SUM(queue = ?) AS SIGNED) AS q, CAST(SUM(concurrency_key = ?) AS SIGNED) AS k FROM ${t.jobs} WHERE state = 'running'`,
    [FULL_QUEUE, FULL_KEY],
  );
  const limits = [
    [{ queue: FULL_QUEUE }, Number(heldQ)],
    [{ key: FULL_KEY }, Number(heldK)],
    [{ queue: 'reports' }, 50],
    [{ key: 'tenant-2' }, 20],
  ];
  for (const [target, max] of limits) await admin.concurrencyLimitSet({ target, max, ...op });
  let folded = 0;
  for (let n = 1; n > 0; folded += n) n = await admin.jobCountsFold({ limit: 10_000 });
  const t1 = performance.now();
  const tables = await query(`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = ?`, [database]);
  await query(`ANALYZE TABLE ${tables.map((r) => `\`${r.name}\``).join(', ')}`);
  done.phases.fold = folded;
  done.phases.analyze = Math.round(performance.now() - t1);
  const seconds = (performance.now() - t0) / 1_000;
  const counted = await censusMysql(query, t, database);
  log(`prefilled in ${seconds.toFixed(0)} s (${Object.entries(done.phases).map(([k, x]) => `${k} ${(x / 1_000).toFixed(1)} s`).join(', ')})`);
  log(`jobs: ${Object.entries(counted.jobs).map(([k, x]) => `${k} ${fmt(x)}`).join(', ')}; ${counted.queues} queues`);
  log(`history ${fmt(counted.history)} entries, ${fmt(counted.openEdges)} open and ${fmt(counted.settledEdges)} settled edges, ${fmt(counted.schedules)} schedules, ${fmt(counted.audit)} audit entries, ${fmt(counted.finishedLastHour)} finished in the last hour; jobs ${counted.jobsMB} MB, history ${counted.historyMB} MB`);
  results.prefill = { seconds: Math.round(seconds), phases: done.phases, segments: plan.segments, limits: limits.map(([target, max]) => ({ ...target, max })), census: counted };

  const stats = await admin.jobStats();
  const kept = new Map(stats.counts.map((c) => [`${c.queue}/${c.state}`, c.count]));
  const wrong = counted.perQueueState.filter((c) => kept.get(`${c.queue}/${c.state}`) !== c.count);
  if (wrong.length > 0 || kept.size !== counted.perQueueState.length) {
    throw new Error(`the store's counts differ from the table's: ${JSON.stringify(wrong.slice(0, 5))} (${kept.size} kept pairs, ${counted.perQueueState.length} counted)`);
  }
  log(`counts: the store's ${kept.size} (queue, state) counts equal the table's`);
  await admin.close();
  save();

  // The dashboard, on a DataSource and store of its own as an app would have them.
  appDataSource = await new DataSource({ type: 'mariadb', url: dbUrl.href, poolSize: 10 }).initialize();
  appStore = new MysqlJobStore({ dataSource: appDataSource });
  dashboard = await startDashboardServer({ store: appStore, logError: (line) => log(`  ${line}`) });
  const targets = await findTargetsMysql({ query, t, store: appStore });
  const pages = PAGES.map((p) => ({ name: p.name, path: p.path(targets) }));
  results.targets = targets;

  const overview = await fetchPage(dashboard.url + '/');
  const shown = overviewTotals(overview.body.toString('utf8'));
  const expected = { Running: counted.jobs.running, Scheduled: counted.jobs.scheduled, 'Awaiting parents': counted.jobs.awaiting_parents, 'Dead-lettered': counted.jobs.dead_lettered };
  const mismatched = Object.entries(expected).filter(([label, n]) => Number(String(shown[label]).replace(/\D/g, '')) !== n);
  results.overviewTotals = { shown, expected };
  if (mismatched.length > 0) throw new Error(`the overview shows ${JSON.stringify(shown)}, the table holds ${JSON.stringify(expected)}`);
  log(`overview totals: ${Object.entries(shown).map(([k, x]) => `${k} ${x}`).join(', ')} (the table's counts)`);

  log(`\n## Pages: ${pages.length} pages and ${READS.length} store read(s), ${num('warmup')} warm-up rounds, then ${num('samples')} rounds, each page once per round`);
  const timings = new Map([...pages, ...READS].map((p) => [p.name, { ms: [], bytes: 0 }]));
  for (let round = 0; round < num('warmup') + num('samples'); round++) {
    const timed = round >= num('warmup');
    for (const page of pages) {
      const r = await fetchPage(dashboard.url + page.path);
      const entry = timings.get(page.name);
      entry.bytes = r.body.length;
      if (r.status !== 200) throw new Error(`${page.name} (${page.path}) answered ${r.status}: ${r.body.toString('utf8').replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').slice(0, 300)}`);
      if (timed) entry.ms.push(r.ms);
    }
    for (const read of READS) {
      const t2 = performance.now();
      await read.run(appStore);
      if (timed) timings.get(read.name).ms.push(performance.now() - t2);
    }
  }
  const summary = (name, path) => {
    const { ms, bytes } = timings.get(name);
    const p95 = percentile(ms, 95);
    return { name, path, medianMs: +percentile(ms, 50).toFixed(2), p95Ms: +p95.toFixed(2), maxMs: +Math.max(...ms).toFixed(2), bytes, over: p95 > BUDGET_MS, samples: ms.map((x) => +x.toFixed(2)) };
  };
  results.pages = pages.map((p) => summary(p.name, p.path));
  results.reads = READS.map((r) => ({ ...summary(r.name, null), bytes: undefined }));
  results.meta.loadavgAfter = loadavg().map((x) => +x.toFixed(2));
  save();

  log(`\n## Statements: every page and read once more, each statement captured; plans of the slow ones`);
  const explainer = mysql2.createConnection({ uri: dbUrl.href, multipleStatements: false }).promise();
  const planParts = [`# Dashboard statements on MariaDB ${v.version} at ${fmt(counted.totalJobs)} jobs, ${results.meta.date}`, ''];
  try {
    for (const item of [...pages.map((p) => ({ ...p, run: () => fetchPage(dashboard.url + p.path) })), ...READS.map((r) => ({ ...r, path: '(store read)', run: () => r.run(appStore) }))]) {
      capture = [];
      await item.run();
      const statements = capture.filter((s) => s.ms !== null);
      capture = null;
      const measured = [...results.pages, ...results.reads].find((p) => p.name === item.name);
      const slowest = [...statements].sort((a, b) => b.ms - a.ms)[0];
      measured.statements = statements.length;
      measured.slowestStatement = slowest ? { ms: +slowest.ms.toFixed(2), sql: slowest.sql.replace(/\s+/g, ' ').slice(0, 200) } : null;
      const explain = statements.filter((s) => s.ms >= num('slow') || measured.over || item.path === '(store read)');
      planParts.push(`## ${item.name} (${item.path}): ${statements.length} statements, ${statements.reduce((a, s) => a + s.ms, 0).toFixed(1)} ms in them`, '');
      for (const s of statements) planParts.push(`- ${s.ms.toFixed(1)} ms: ${s.sql.replace(/\s+/g, ' ').slice(0, 240)}`);
      for (const s of explain) {
        planParts.push('', `### ${s.ms.toFixed(1)} ms`, '```sql', s.sql, '```');
        for (const a of await analyzeScript(explainer, s.sql)) planParts.push('```json', a.error ?? JSON.stringify(a.analyze, null, 1), '```');
      }
      planParts.push('');
    }
  } finally {
    capture = null;
    await explainer.end();
  }
  mkdirSync(dirname(plansFile), { recursive: true });
  writeFileSync(plansFile, planParts.join('\n'));
  results.plans = plansFile;
  save();

  const ms = (x) => (x < 10 ? x.toFixed(1) : fmt(x));
  log(`\n#### Dashboard pages on MariaDB ${v.version} at ${fmt(counted.totalJobs)} jobs: ms per request (client-timed, whole body), ${num('samples')} samples; target < ${BUDGET_MS} ms\n`);
  table(
    ['Page', 'median', 'p95', 'KB', 'statements', `< ${BUDGET_MS} ms`],
    [
      ...results.pages.map((p) => [`${p.name} \`${p.path.length > 40 ? `${p.path.slice(0, 38)}…` : p.path}\``, ms(p.medianMs), ms(p.p95Ms), fmt(p.bytes / 1024, 1), p.statements ?? '–', p.over ? '**no**' : 'yes']),
      ...results.reads.map((r) => [r.name, ms(r.medianMs), ms(r.p95Ms), '–', r.statements ?? '–', r.over ? '**no**' : 'yes']),
    ],
  );
  const over = [...results.pages, ...results.reads].filter((p) => p.over);
  log(over.length ? `\nOVER ${BUDGET_MS} ms (p95): ${over.map((p) => `${p.name} (${ms(p.p95Ms)} ms; slowest statement ${p.slowestStatement?.ms} ms: ${p.slowestStatement?.sql})`).join('; ')}` : `\nEvery page's and read's p95 is under ${BUDGET_MS} ms.`);
} finally {
  results.meta.minutes = +((performance.now() - started) / 60_000).toFixed(1);
  save();
  await dashboard?.close();
  await appStore?.close();
  await appDataSource?.destroy();
  await dataSource?.destroy();
  if (values.keep) log(`kept database ${database} (--keep); drop it with: DROP DATABASE \`${database}\``);
  else await dropDatabase();
  await server.destroy();
}
log(`\nresults in ${outFile}, plans in ${plansFile} (${results.meta.minutes} minutes)`);
