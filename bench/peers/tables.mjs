// The markdown tables of a peers run: the same text goes to the terminal and into bench/README.md.
import { fmt, median, table } from '../support.mjs';
import { headline, sections, variants } from '../systems/index.mjs';
import { enqueueModes } from '../workloads/enqueue.mjs';
import { bullmqRatioRows, ratioRows } from './report.mjs';

const byVariant = (cells, v) => cells.filter((c) => c.variant === v);
// A run narrowed by --variants (or one where a variant was left out) prints rows for what it ran.
const ran = (ids, cells) => ids.filter((v) => cells.some((c) => c.variant === v));
// A section run on its own (`--only latency`) has idle cells and no load cells: those print as a dash.
// Cells recorded without a counter (older results files, or a server on another machine): also a dash.
const med = (cells, key, digits = 0) => (cells.length && cells.every((c) => Number.isFinite(c[key])) ? fmt(median(cells.map((c) => c[key])), digits) : '–');
const heading = (text) => console.log(`\n### ${text}\n`);

const drainHeaders = ['Cell', 'jobs/s (median)', 'spread', 'commits/job', 'WAL B/job', 'CPU ms/job', 'server CPU ms/job', 'RSS MB', 'dead tuples', 'table+index MB', ''];
function drainRow(label, cells) {
  const rates = cells.map((c) => c.jobsPerSec);
  return [
    label,
    fmt(median(rates)),
    `${fmt(Math.min(...rates))}–${fmt(Math.max(...rates))}`,
    med(cells, 'commitsPerJob', 3),
    med(cells, 'walBytesPerJob'),
    med(cells, 'cpuMsPerJob', 3),
    med(cells, 'serverCpuMsPerJob', 3),
    med(cells, 'peakRssMb'),
    med(cells, 'deadTuples'),
    fmt(median(cells.map((c) => c.tableBytes)) / 2 ** 20, 1),
    cells.some((c) => c.capped) ? 'capped' : '',
  ];
}

/** What a Redis row's figures are, printed under each table that has one. */
function redisNote(results, cells, drain = false) {
  const redis = results.meta?.redis;
  if (!redis || !cells.some((c) => (c.system ?? variants[c.variant].system) === 'bullmq-redis')) return;
  const disk = redis.keepsNothingOnDisk ? 'keeps nothing on disk' : `persists (save '${redis.save}', appendonly ${redis.appendonly})`;
  const counters = drain ? ' Commits, WAL and dead tuples do not apply (–); server CPU is Redis\'s own (INFO cpu); table+index MB is the growth of its used_memory over the cell.' : '';
  console.log(`\nBullMQ on Redis ${redis.version}: this Redis ${disk}.${counters}`);
}

export function printTables(results, P, summary) {
  if (results.headline.length) {
    heading(`Drain, ${fmt(P.drain)} jobs, 1 process (headline settings)`);
    table(drainHeaders, ran(Object.keys(headline), results.headline).map((v) => drainRow(`${variants[v].label} (c=${headline[v]})`, byVariant(results.headline, v))));
    redisNote(results, results.headline, true);
  }
  if (results.matrix.length) {
    heading('Drain by concurrency per process and processes');
    const rows = [];
    for (const v of Object.keys(variants)) {
      for (const p of [1, 2]) {
        for (const c of [10, 50]) {
          const cells = results.matrix.filter((x) => x.variant === v && x.processes === p && x.c === c);
          if (cells.length) rows.push(drainRow(`${variants[v].label}, c=${c}, ${p} proc`, cells));
        }
      }
    }
    table(drainHeaders, rows);
  }
  if (results.enqueue.length) {
    heading('Enqueue (jobs/s, median)');
    const systems = sections.enqueue.filter((s) => results.enqueue.some((c) => c.system === s));
    table(['Mode', ...systems], enqueueModes.map((m) => [m, ...systems.map((s) => med(results.enqueue.filter((c) => c.system === s && c.mode === m), 'jobsPerSec'))]));
    redisNote(results, results.enqueue);
  }
  if (results.latency.length) {
    heading('Latency, enqueue commit → handler start (ms, median of runs)');
    table(['Cell', 'idle p50', 'idle p99', 'idle max', 'load rate/s', 'load p50', 'load p99', 'load max'], ran(sections.latency, results.latency).map((v) => {
      const idle = results.latency.filter((c) => c.variant === v && c.mode === 'idle');
      const load = results.latency.filter((c) => c.variant === v && c.mode === 'load');
      return [variants[v].label, med(idle, 'p50', 1), med(idle, 'p99', 1), med(idle, 'max', 1), med(load, 'rate'), med(load, 'p50', 1), med(load, 'p99', 1), med(load, 'max', 1)];
    }));
    redisNote(results, results.latency);
  }
  if (results.retry.length) {
    heading(`Retry storm, ${fmt(P.storm)} jobs failing twice (per run)`);
    table(['Cell', 'seconds (median)', 'attempts/s', 'exactly 3 attempts', 'fewer', 'more', 'left in table'], ran(sections.retry, results.retry).map((v) => {
      const cells = byVariant(results.retry, v);
      const each = (k) => cells.map((c) => c[k]).join(' / ');
      return [variants[v].label, med(cells, 'seconds', 1), med(cells, 'attemptsPerSec'), each('exactly3'), each('fewer'), each('more'), each('leftInTable')];
    }));
  }
  if (results.future.length) {
    heading(`Drain with ${fmt(P.futures)} future-dated jobs present`);
    table(['Cell', 'empty table jobs/s', 'with futures jobs/s', 'ratio'], ran(sections.future, results.future).map((v) => {
      const e = median(results.future.filter((c) => c.variant === v && c.futures === 0).map((c) => c.jobsPerSec));
      const f = median(results.future.filter((c) => c.variant === v && c.futures > 0).map((c) => c.jobsPerSec));
      return [variants[v].label, fmt(e), fmt(f), fmt(f / e, 2)];
    }));
  }
  if (results.crash.length) {
    heading(`Crash recovery: SIGKILL with 100 jobs held (cap ${P.crashCap / 1_000} s)`);
    table(['Cell', 'lease / lock timeout', 'seconds from kill, per run'], ran(sections.crash, results.crash).map((v) => {
      const cells = byVariant(results.crash, v);
      const lease = cells[0].stalled_s ? `${fmt(cells[0].lease_s)} s lock, stalled check every ${fmt(cells[0].stalled_s)} s` : `${fmt(cells[0].lease_s)} s`;
      return [variants[v].label, lease, cells.map((c) => (c.recovered ? fmt(c.seconds, 1) : `> ${c.capSeconds}`)).join(' / ')];
    }));
    redisNote(results, results.crash);
  }
  for (const soak of results.soak) {
    heading(`Soak, ${variants[soak.variant].label}: jobs/s and dead tuples per window (* = transaction held)`);
    console.log(soak.windows.map((w) => `${w.t}s${w.held ? '*' : ''}: ${fmt(w.jobsPerSec)} jobs/s, ${fmt(w.deadTuples)} dead`).join('\n'));
    console.log(`first third ${fmt(soak.firstThird)}, held ${fmt(soak.heldThird)}, after release ${fmt(soak.afterRelease)} jobs/s: recovery ratio ${fmt(soak.recoveryRatio, 2)}`);
  }
  heading('Ratios against the targets');
  table(['Target', 'Measured', 'Goal', 'Met'], ratioRows(summary).map(([a, b, c, d]) => [a, b, c, d ? 'yes' : 'no']));
  heading('Ratios to BullMQ 6 (no target; n/a where a cell did not run)');
  table(['Ratio', 'Measured'], bullmqRatioRows(summary));
}
