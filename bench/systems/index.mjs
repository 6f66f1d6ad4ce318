// The systems under test and their settings. `c` is the cell's concurrency per process; settings
// a peer documents as its tuning keep their documented values where `c` has no equivalent.
import ours from './ours.mjs';
import graphile from './graphile.mjs';
import pgboss from './pgboss.mjs';
import raw from './raw-floor.mjs';

export const systems = { ours, graphile, pgboss, raw };

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
};
