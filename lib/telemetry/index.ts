export * from './scheduler-telemetry.js';
export { ATTR as TELEMETRY_ATTRIBUTES, METRIC as TELEMETRY_METRICS, MESSAGING_SYSTEM, STALE_OUTCOME_EVENT, LEASE_LOST_EVENT, SCOPE as TELEMETRY_SCOPE } from './semconv.js';
export { GAUGE_TASK } from './semconv.js';
export type { SendInfo } from './send-info.js';
