// Turns the cells of a run into summary.json, the ratio table and bench/results/ratios.svg.
import { median } from '../support.mjs';

const med = (cells, pick) => median(cells.map(pick).filter((v) => Number.isFinite(v)));
const spread = (values) => (values.length ? [Math.min(...values), Math.max(...values)] : []);
/** a / b, or null when either side did not run (a variant left out, or a section not run). */
const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? a / b : null);
const finite = (values) => values.filter((v) => Number.isFinite(v));

export function summarize(results) {
  const drain = (v) => results.headline.filter((c) => c.variant === v).map((c) => c.jobsPerSec);
  const ours = median(drain('ours-tuned'));
  const bulk = (s) => median(results.enqueue.filter((c) => c.system === s && c.mode === 'bulk of 1,000').map((c) => c.jobsPerSec));
  const idle = (v) => results.latency.filter((c) => c.variant === v && c.mode === 'idle');
  const crash = results.crash.filter((c) => c.variant === 'ours-tuned');
  const future = results.future.filter((c) => c.variant === 'ours-tuned');
  const ratios = future.filter((c) => c.futures > 0).map((c, i) => c.jobsPerSec / future.filter((e) => e.futures === 0)[i].jobsPerSec);
  const soakOurs = results.soak.filter((c) => c.variant === 'ours-tuned');
  const rate = (v) => median(drain(v));
  // A peer with two tuned variants (keep or remove completed jobs) is held to its faster drain and
  // its lower idle p50.
  const fastest = (...vs) => (finite(vs.map(rate)).length ? Math.max(...finite(vs.map(rate))) : null);
  const p50 = (v) => med(idle(v), (c) => c.p50);
  const quickest = (...vs) => (finite(vs.map(p50)).length ? Math.min(...finite(vs.map(p50))) : null);
  const oursP50 = p50('ours-tuned');
  return {
    drain_vs_graphile_tuned: ratio(ours, rate('graphile-tuned')),
    drain_lean_vs_graphile_tuned: ratio(rate('ours-tuned-lean'), rate('graphile-tuned')),
    drain_defaults_vs_bullmq_pg_defaults: ratio(rate('ours-default'), rate('bullmq-pg-default')),
    drain_vs_bullmq_pg_tuned: ratio(ours, fastest('bullmq-pg-tuned-keep', 'bullmq-pg-tuned-remove')),
    drain_defaults_vs_bullmq_defaults: ratio(rate('ours-default'), rate('bullmq-redis-default')),
    drain_vs_bullmq_tuned: ratio(ours, fastest('bullmq-redis-tuned-keep', 'bullmq-redis-tuned-remove')),
    drain_vs_pgboss_tuned: ours / median(drain('pgboss-tuned')),
    drain_vs_raw_floor: ours / median(drain('raw')),
    bulk_enqueue_vs_graphile: bulk('ours') / bulk('graphile'),
    idle_latency_p50_ms: med(idle('ours-tuned'), (c) => c.p50) ?? null,
    idle_latency_p50_vs_graphile: ratio(oursP50, p50('graphile-tuned')),
    idle_latency_p50_vs_bullmq_pg: ratio(oursP50, quickest('bullmq-pg-tuned-keep', 'bullmq-pg-tuned-remove')),
    idle_latency_p50_vs_bullmq: ratio(oursP50, quickest('bullmq-redis-tuned-keep', 'bullmq-redis-tuned-remove')),
    idle_latency_p99_ms: med(idle('ours-tuned'), (c) => c.p99) ?? null,
    crash_recovery_s: crash.length > 0 && crash.every((c) => c.recovered) ? median(crash.map((c) => c.seconds)) : null,
    lease_s: crash[0]?.lease_s ?? null,
    future_1m_drain_ratio: median(ratios) ?? null,
    // Ours only: the soak also runs graphile-worker for comparison, and a median over both systems
    // would report whichever of the two sorts higher.
    soak_recovery_ratio: soakOurs.length ? median(soakOurs.map((s) => s.recoveryRatio)) : null,
    spreads: {
      drain_ours_tuned_jobs_s: spread(drain('ours-tuned')),
      drain_graphile_tuned_jobs_s: spread(drain('graphile-tuned')),
      drain_pgboss_tuned_jobs_s: spread(drain('pgboss-tuned')),
      drain_raw_floor_jobs_s: spread(drain('raw')),
      future_ratio: spread(ratios),
    },
  };
}

/** [label, measured, target text, met?]: the targets the bench holds ours to. */
export function ratioRows(s) {
  const f = (v, d = 2) => (v === null || !Number.isFinite(v) ? 'n/a' : v.toFixed(d));
  return [
    ['drain vs graphile-worker tuned', `${f(s.drain_vs_graphile_tuned)}×`, '≥ 1.0×', s.drain_vs_graphile_tuned >= 1],
    ['drain vs pg-boss tuned', `${f(s.drain_vs_pgboss_tuned)}×`, '≥ 5×', s.drain_vs_pgboss_tuned >= 5],
    ['drain vs raw SQL floor', `${f(s.drain_vs_raw_floor)}×`, '≥ 0.6×', s.drain_vs_raw_floor >= 0.6],
    ['bulk enqueue vs graphile addJobs', `${f(s.bulk_enqueue_vs_graphile)}×`, '≥ 1.0×', s.bulk_enqueue_vs_graphile >= 1],
    ['idle latency p50 vs graphile p50', `${f(s.idle_latency_p50_vs_graphile)}× (${f(s.idle_latency_p50_ms, 1)} ms)`, '≤ 1.0×', s.idle_latency_p50_vs_graphile !== null && s.idle_latency_p50_vs_graphile <= 1],
    ['idle latency p99', `${f(s.idle_latency_p99_ms, 1)} ms`, '≤ 10 ms', s.idle_latency_p99_ms !== null && s.idle_latency_p99_ms <= 10],
    ['crash recovery', s.crash_recovery_s === null ? '> cap' : `${f(s.crash_recovery_s, 1)} s (lease ${s.lease_s} s)`, `≤ lease + 1 poll = ${s.lease_s + 1} s`, s.crash_recovery_s !== null && s.crash_recovery_s <= s.lease_s + 1],
    ['drain with future-dated jobs vs empty table', `${f(s.future_1m_drain_ratio)}×`, '≥ 0.8×', s.future_1m_drain_ratio >= 0.8],
    ['soak: throughput after the held transaction', `${f(s.soak_recovery_ratio)}×`, '≥ 0.8×', s.soak_recovery_ratio >= 0.8],
  ];
}

/** [label, measured]: ours against BullMQ 6 on each backend; no target holds these. */
export function bullmqRatioRows(s) {
  const f = (v) => (v === null || !Number.isFinite(v) ? 'n/a' : `${v.toFixed(2)}×`);
  return [
    ['drain, defaults: ours / BullMQ on PostgreSQL', f(s.drain_defaults_vs_bullmq_pg_defaults)],
    ['drain, tuned: ours / BullMQ on PostgreSQL (faster of keep, remove)', f(s.drain_vs_bullmq_pg_tuned)],
    ['drain, defaults: ours / BullMQ on Redis', f(s.drain_defaults_vs_bullmq_defaults)],
    ['drain, tuned: ours / BullMQ on Redis (faster of keep, remove)', f(s.drain_vs_bullmq_tuned)],
    ['idle latency p50: ours tuned / BullMQ on PostgreSQL (lower of keep, remove)', f(s.idle_latency_p50_vs_bullmq_pg)],
    ['idle latency p50: ours tuned / BullMQ on Redis (lower of keep, remove)', f(s.idle_latency_p50_vs_bullmq)],
    ['drain, tuned with the lean finish: ours / graphile-worker tuned', f(s.drain_lean_vs_graphile_tuned)],
  ];
}

/** A hand-rolled horizontal bar chart of measured / target, one bar per target (1.0 = target met). */
export function ratiosSvg(s, title) {
  const bars = [
    ['drain / graphile tuned', s.drain_vs_graphile_tuned, 1, 'up'],
    ['drain / pg-boss tuned', s.drain_vs_pgboss_tuned, 5, 'up'],
    ['drain / raw floor', s.drain_vs_raw_floor, 0.6, 'up'],
    ['bulk enqueue / graphile', s.bulk_enqueue_vs_graphile, 1, 'up'],
    ['idle p50 / graphile', s.idle_latency_p50_vs_graphile, 1, 'down'],
    ['idle p99 (ms)', s.idle_latency_p99_ms, 10, 'down'],
    ['crash recovery (s)', s.crash_recovery_s, (s.lease_s ?? 0) + 1, 'down'],
    ['future-jobs drain ratio', s.future_1m_drain_ratio, 0.8, 'up'],
    ['soak recovery ratio', s.soak_recovery_ratio, 0.8, 'up'],
  ];
  const W = 760, left = 220, row = 30, top = 50, scale = 400 / 2; // 2.0 = full width
  const rows = bars.map(([label, value, target, dir], i) => {
    const score = value === null || !Number.isFinite(value) ? 0 : dir === 'up' ? value / target : target / Math.max(value, 1e-9);
    const width = Math.min(2, score) * scale;
    const y = top + i * row;
    const color = score >= 1 ? '#2e7d32' : '#c62828';
    const shown = value === null || !Number.isFinite(value) ? 'n/a' : value.toFixed(2);
    return `<text x="${left - 8}" y="${y + 15}" text-anchor="end">${label}</text>
<rect x="${left}" y="${y + 3}" width="${width.toFixed(1)}" height="18" fill="${color}"/>
<text x="${left + width + 6}" y="${y + 16}">${shown} (target ${dir === 'up' ? '≥' : '≤'} ${target})</text>`;
  });
  const h = top + bars.length * row + 30;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${h}" font-family="sans-serif" font-size="12">
<text x="10" y="20" font-size="14" font-weight="bold">${title}</text>
<text x="10" y="38" fill="#555">bar = measured ÷ target (inverted where lower is better); the line marks the target</text>
${rows.join('\n')}
<line x1="${left + scale}" y1="${top - 4}" x2="${left + scale}" y2="${h - 26}" stroke="#000" stroke-dasharray="4 3"/>
<text x="${left + scale}" y="${h - 12}" text-anchor="middle">target</text>
</svg>
`;
}
