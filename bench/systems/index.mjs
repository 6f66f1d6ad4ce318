// The systems under test and their settings. `c` is the cell's concurrency per process; settings
// a peer documents as its tuning keep their documented values where `c` has no equivalent.
import ours from './ours.mjs';
import graphile from './graphile.mjs';
import pgboss from './pgboss.mjs';
import raw from './raw-floor.mjs';
import { bullmqPg, bullmqRedis } from './bullmq.mjs';

export const systems = { ours, graphile, pgboss, raw, 'bullmq-redis': bullmqRedis, 'bullmq-pg': bullmqPg };

const graphileTuned = { localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 };

/** variant id → { system, label, settings(c) }. */
export const variants = {
  'ours-default': { system: 'ours', label: 'ours, defaults', settings: (c) => ({ concurrency: c }) },
  // Short handlers: claims as large as the concurrency, committed without waiting for the flush (README, "Performance").
  'ours-tuned': { system: 'ours', label: 'ours, tuned', settings: (c) => ({ concurrency: c, claimBatchSize: Math.min(c, 200), asyncClaimCommit: true }) },
  // The same with the store option finish: 'lean': a success that nothing needs is deleted in its outcome write (docs/stores.md#lean-finish).
  'ours-tuned-lean': { system: 'ours', label: 'ours, tuned, lean finish', settings: (c) => ({ concurrency: c, claimBatchSize: Math.min(c, 200), asyncClaimCommit: true, finish: 'lean' }) },
  // The same with OpenTelemetry: the API installed and no SDK (what every app with the package pays),
  // and an SDK whose spans go to a no-op exporter and whose metrics are aggregated (docs/observability.md).
  'ours-tuned-otel-api': { system: 'ours', label: 'ours, tuned, OTel API without SDK', settings: (c) => ({ concurrency: c, claimBatchSize: Math.min(c, 200), asyncClaimCommit: true, telemetry: 'api' }) },
  'ours-tuned-otel-sdk': { system: 'ours', label: 'ours, tuned, OTel SDK with no-op exporter', settings: (c) => ({ concurrency: c, claimBatchSize: Math.min(c, 200), asyncClaimCommit: true, telemetry: 'sdk' }) },
  'ours-tuned-otel-traces': { system: 'ours', label: 'ours, tuned, OTel SDK, spans only', settings: (c) => ({ concurrency: c, claimBatchSize: Math.min(c, 200), asyncClaimCommit: true, telemetry: 'sdk-traces' }) },
  'ours-tuned-otel-metrics': { system: 'ours', label: 'ours, tuned, OTel SDK, metrics only', settings: (c) => ({ concurrency: c, claimBatchSize: Math.min(c, 200), asyncClaimCommit: true, telemetry: 'sdk-metrics' }) },
  'graphile-default': { system: 'graphile', label: 'graphile-worker, defaults', settings: (c) => ({ concurrency: c }) },
  'graphile-tuned': { system: 'graphile', label: 'graphile-worker, tuned', settings: (c) => ({ concurrency: c, preset: { worker: graphileTuned } }) },
  'pgboss-default': { system: 'pgboss', label: 'pg-boss, defaults', settings: (c) => ({ workers: c }) },
  'pgboss-tuned': { system: 'pgboss', label: 'pg-boss, tuned', settings: () => ({ workers: 8, batchSize: 100, pollingIntervalSeconds: 0.5 }) },
  raw: { system: 'raw', label: 'raw SQL floor', settings: () => ({}) },
  // Defaults at c = 10 as every peer's defaults cell (BullMQ's own default concurrency is 1). BullMQ
  // keeps every completed job unless `removeOnComplete` says otherwise, set per job at enqueue.
  'bullmq-redis-default': { system: 'bullmq-redis', label: 'BullMQ on Redis, defaults', settings: (c) => ({ concurrency: c }) },
  'bullmq-redis-tuned-keep': { system: 'bullmq-redis', label: 'BullMQ on Redis, tuned, keeps completed', settings: (c) => ({ concurrency: c }) },
  'bullmq-redis-tuned-remove': { system: 'bullmq-redis', label: 'BullMQ on Redis, tuned, removeOnComplete', settings: (c) => ({ concurrency: c, removeOnComplete: true }) },
  'bullmq-pg-default': { system: 'bullmq-pg', label: 'BullMQ on PostgreSQL, defaults', settings: (c) => ({ concurrency: c }) },
  'bullmq-pg-tuned-keep': { system: 'bullmq-pg', label: 'BullMQ on PostgreSQL, tuned, keeps completed', settings: (c) => ({ concurrency: c }) },
  'bullmq-pg-tuned-remove': { system: 'bullmq-pg', label: 'BullMQ on PostgreSQL, tuned, removeOnComplete', settings: (c) => ({ concurrency: c, removeOnComplete: true }) },
};

/** The headline drain cells: each peer's documented tuned configuration, and its defaults at c = 10. */
export const headline = {
  'ours-default': 10,
  'ours-tuned': 200,
  'ours-tuned-lean': 200,
  'ours-tuned-otel-api': 200,
  'ours-tuned-otel-sdk': 200,
  'ours-tuned-otel-traces': 200,
  'ours-tuned-otel-metrics': 200,
  'graphile-default': 10,
  'graphile-tuned': 32,
  'pgboss-default': 10,
  'pgboss-tuned': 8,
  raw: 400,
  'bullmq-redis-default': 10,
  'bullmq-redis-tuned-keep': 100,
  'bullmq-redis-tuned-remove': 100,
  'bullmq-pg-default': 10,
  'bullmq-pg-tuned-keep': 100,
  'bullmq-pg-tuned-remove': 100,
};

/** The variants (systems, for enqueue) each section runs, before --variants narrows them. */
export const sections = {
  enqueue: ['ours', 'graphile', 'pgboss', 'raw', 'bullmq-redis', 'bullmq-pg'],
  latency: ['ours-tuned', 'graphile-tuned', 'pgboss-tuned', 'raw', 'bullmq-redis-tuned-keep', 'bullmq-redis-tuned-remove', 'bullmq-pg-tuned-keep', 'bullmq-pg-tuned-remove'],
  future: ['ours-tuned', 'graphile-tuned', 'pgboss-tuned', 'raw'],
  retry: ['ours-tuned', 'graphile-tuned', 'pgboss-tuned'],
  crash: ['ours-tuned', 'graphile-tuned', 'pgboss-tuned', 'bullmq-redis-tuned-keep', 'bullmq-pg-tuned-keep'],
};

/**
 * Whether this build can run a variant: null if so, else why not. A system says through
 * `accepts(settings)`; ours refuses a setting its library does not have yet (ours-tuned-lean).
 */
export function unsupported(variantId, c = headline[variantId]) {
  const variant = variants[variantId];
  return systems[variant.system].accepts?.(variant.settings(c)) ?? null;
}
