/**
 * `nestjs-durable-scheduler/store-kit`: what the author of a store adapter builds on. The
 * `JobStore` contract with its parameter and result types; `CheckedStore`, which implements it once
 * over the narrow `StoreDriver` an adapter writes (so every adapter refuses bad input with the
 * same sentence and audits the same way); the checks it applies, for drivers that need one of
 * them; the schedule logic the driver's `scheduleTx` runs; and the pure core (lifecycle rules,
 * ids, limits, validation) the contract is written in. The conformance suite that pins an adapter to the contract is
 * `nestjs-durable-scheduler/store-kit/conformance`, kept apart because it needs Jest.
 */
export * from '../core/index.js';
export type * from '../store/job-store.js';
export { CheckedStore } from '../store/checked/checked-store.js';
export type * from '../store/checked/store-driver.js';
export type { OperatorTransition } from '../store/checked/operator-transition.js';
export type { StoreCapabilities, ConnectionPoolCapability } from '../store/index.js';
export type { AttemptTransaction, QueueSummary } from '../store/index.js';
export { ANY_QUEUE, WakeHub, type WakeListener, type WakeSubscription } from '../store/index.js';
export { SystemClock } from '../store/index.js';
export {
  DEFAULT_MAX_ATTEMPTS,
  DEFAULT_QUEUE,
  MAX_CONCURRENCY_KEY,
  MAX_PARENTS,
  MAX_UNIQUE_KEY,
  normalizeEnqueue,
  normalizeEnqueueMany,
  type EnqueueInput,
  type NewJob,
  type UniqueKeyMode,
} from '../store/index.js';
export { toJob, type JobRow } from '../store/index.js';
export {
  DEFAULT_LIST_LIMIT,
  MAX_BATCH,
  MAX_LEASE_MS,
  checkClaimParams,
  checkCompleteParams,
  checkDeadLetterListParams,
  checkExpireParams,
  checkHeartbeatParams,
  checkLeases,
  checkListParams,
  checkRelinquishParams,
  optionalParamsOf,
  paramsOf,
  type CheckedClaimParams,
  type NormalizedOutcome,
} from '../store/index.js';
export {
  checkNodeBeatParams,
  checkNodeListParams,
  checkNodePruneParams,
  checkNodeRef,
  DEFAULT_NODE_LIST_LIMIT,
  MAX_NODE_PRUNE_BATCH,
} from '../store/index.js';
export { cutPage, LIST_SCAN_LIMIT, matchesFilters, type DriverListParams, type ScannedJob } from '../store/index.js';
// The operator reads' bounds, the shapes their drivers return, and the pieces every store shares.
export * from '../store/operator-reads.js';
export {
  checkEdgesParams,
  checkHistoryParams,
  checkHoldersParams,
  checkLimitListParams,
  checkObserverListParams,
  checkOldestDueParams,
  checkQueueListParams,
  checkThroughputParams,
} from '../store/checked/operator-read-params.js';
export {
  assertFinishMode,
  assertHistoryPolicy,
  assertLimitMax,
  assertPosition,
  checkHistoryRead,
  checkObserverCommit,
  checkObserverFail,
  checkObserverLease,
  limitKey,
  limitOf,
  SERIAL_POSITION,
} from '../store/checked/effect-params.js';
export * from '../store/schedules/index.js';
export { LATEST_SCHEMA_VERSION } from '../store/index.js';
