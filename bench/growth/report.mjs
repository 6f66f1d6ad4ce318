// The growth bench's markdown tables (the same text goes to the terminal and into
// bench/README.md), each built from the results JSON alone.
import { fmt, table } from '../support.mjs';
import { TARGET_MS } from './statements.mjs';

/** The median; of an even count, the mean of the middle two. */
export function median(xs) {
  const sorted = [...xs].sort((a, b) => a - b);
  const m = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[m] : (sorted[m - 1] + sorted[m]) / 2;
}

/** The target figure of a drain pair: the median of each round's own ratio, so a round slowed by the machine counts once. */
export const perRoundRatio = (rounds, a, b) => median(rounds.map((r) => r[b].jobsPerSec / r[a].jobsPerSec));

export function statementTable(statements, small, big) {
  const { small: s0 = {}, big: b0 = {} } = statements;
  const names = [...new Set([...Object.keys(s0), ...Object.keys(b0)])];
  const ms = (r) => (!r ? '–' : r.missing ? 'n/a' : r.error ? 'failed' : r.ms < 10 ? r.ms.toFixed(2) : fmt(r.ms, 1));
  const rows = names.map((name) => {
    const s = s0[name];
    const b = b0[name];
    const ratio = s?.ms && b?.ms ? `${(b.ms / s.ms).toFixed(2)}×` : '–';
    const hit = b?.ms === undefined ? '–' : b.ms < TARGET_MS ? 'yes' : '**no**';
    return [name, (s ?? b).kind, ms(s), ms(b), ratio, b?.rows ?? s?.rows ?? '–', b?.calls ?? '–', hit];
  });
  console.log(`\n#### Statements: median ms, ${fmt(small)} vs ${fmt(big)} retained jobs (client-timed; target < ${TARGET_MS} ms at the big size)\n`);
  table(['Statement', 'kind', fmt(small), fmt(big), 'ratio', 'rows', 'calls', `< ${TARGET_MS} ms`], rows);
}

export function drainTable(title, rounds, a, b, labels) {
  console.log(`\n#### ${title}\n`);
  table(
    ['Round', `${labels[0]} jobs/s`, `${labels[1]} jobs/s`, 'ratio'],
    [
      ...rounds.map((r, i) => [String(i + 1), fmt(r[a].jobsPerSec), fmt(r[b].jobsPerSec), (r[b].jobsPerSec / r[a].jobsPerSec).toFixed(2)]),
      ['median', fmt(median(rounds.map((r) => r[a].jobsPerSec))), fmt(median(rounds.map((r) => r[b].jobsPerSec))), `**${perRoundRatio(rounds, a, b).toFixed(2)}**`],
    ],
  );
}

export function scheduleTables({ plain: p, recurring: r, catchUp: c }, capSeconds) {
  const cpu = (x) => (x === null ? '–' : x.toFixed(3));
  const ratio = (x, y) => (x === null || y === null ? '–' : (x / y).toFixed(2));
  const late = (w) => `${w.p50} / ${w.p99} / ${w.max}`;
  console.log(`\n#### ${fmt(r.schedules)} schedules every ${r.everyMs / 1_000} s vs plain jobs at the same rate (per occurrence or job)\n`);
  table(
    ['', 'per second', 'Node CPU ms', 'PostgreSQL CPU ms', 'total CPU ms', 'minted late p50 / p99 / max ms', 'started late p50 / p99 / max ms'],
    [
      ['plain jobs (enqueued one by one)', fmt(p.rate), cpu(p.nodeCpuMs), cpu(p.pgCpuMs), cpu(p.totalCpuMs), '–', late(p.waitMs)],
      ['schedule occurrences', fmt(r.mintedPerSec), cpu(r.nodeCpuMs), cpu(r.pgCpuMs), cpu(r.totalCpuMs), late(r.mintLateMs), late(r.startLateMs)],
      ['ratio', '', ratio(r.nodeCpuMs, p.nodeCpuMs), ratio(r.pgCpuMs, p.pgCpuMs), ratio(r.totalCpuMs, p.totalCpuMs), '', ''],
    ],
  );
  if (!c) return;
  console.log(`\n#### Catch-up after a ${c.outageMs / 60_000}-minute outage of ${fmt(c.schedules)} schedules, plain jobs at ${fmt(c.plainRate)}/s\n`);
  table(
    ['caught up (s)', 'first pass (s)', 'ticks skipped', 'WARN lines', 'LOG lines', 'plain jobs', 'plain wait p99 (ms)', 'max (ms)', 'over 5 s'],
    [
      [
        c.capped ? `> ${capSeconds}` : (c.caughtUpMs / 1_000).toFixed(1),
        c.firstPassMs === null ? '–' : (c.firstPassMs / 1_000).toFixed(1),
        fmt(c.skippedTicks),
        fmt(c.lines.warn),
        fmt(c.lines.log),
        fmt(c.plainWaitMs.count),
        fmt(c.plainWaitMs.p99),
        fmt(c.plainWaitMs.max),
        fmt(c.plainWaitMs.over5s),
      ],
    ],
  );
  if (c.warnSample) console.log(`\nfirst WARN line: ${c.warnSample}`);
}

/** The issue's targets, as far as this run's sections measured them. */
export function targetsTable(results, rows) {
  const targets = [];
  if (results.statements?.big) {
    const over = Object.entries(results.statements.big).filter(([, r]) => r.ms !== undefined && r.ms >= TARGET_MS);
    const failed = Object.entries(results.statements.big).filter(([, r]) => r.error);
    const text = over.length === 0 ? 'all' : `${over.length} over: ${over.map(([n, r]) => `${n} ${fmt(r.ms, 0)} ms`).join('; ')}`;
    targets.push([`every periodic and listing statement at ${fmt(rows)}`, `< ${TARGET_MS} ms`, failed.length ? `${text} (${failed.length} failed)` : text]);
  }
  if (results.drain) targets.push([`drain at ${fmt(rows)} retained vs empty`, '≥ 0.9×', `${results.drain.ratio.toFixed(2)}×`]);
  if (results.queues) targets.push([`${fmt(results.queues.queues)} queues vs 1`, '≥ 0.9×', `${results.queues.ratio.toFixed(2)}×`]);
  if (targets.length === 0) return;
  console.log('\n#### Targets\n');
  table(['Target', 'Goal', 'This run'], targets);
}
