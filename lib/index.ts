/**
 * The root entry point: what a NestJS application uses. The engine's other parts have entry
 * points of their own (docs/entry-points.md): `nestjs-durable-scheduler/worker` (a worker without
 * NestJS), `/testing` (the in-memory store and a manual clock), `/store-kit` (for store adapter
 * authors, with the conformance suite in `/store-kit/conformance`) and `/simulator`.
 * test/package/exports.spec.ts pins this list, so adding a name here is a deliberate act.
 */

// The module, the tokens an application injects, and the options.
export { SchedulerModule, SchedulerOrchestrator, SCHEDULER_STORE, JOB_CONTEXT, JOB_ENTITY_MANAGER } from './nest/index.js';
export type { SchedulerModuleOptions, SchedulerModuleExtras } from './nest/index.js';
export type { WorkerOptions, SettledEvent, ErrorLogDetail, WorkerNodeEvents, AttemptStartedEvent, LeaseLostEvent, ClaimFailedEvent, NodeStateChangedEvent } from './worker/index.js';

// Decorators.
export { Job, InjectJobContext, InjectJobEntityManager, OnJobTransition, type OnJobTransitionOptions } from './nest/index.js';

// Jobs: definitions shared by producers and workers, handlers, and the typed registry.
export { defineJob, type DefineJobOptions, type DefinedJob, type DefinedJobSpec, type JobSequenceOption, type PayloadOf } from './nest/index.js';
export type { JobHandler, BatchJobHandler, JobOptions, JobHandlerOptions, DeclaredSchedule, JobRegistry, JobName, JobPayload } from './nest/index.js';
export type { JobContext, BatchJob, BatchContext, BatchHandlerOptions } from './worker/index.js';
export type { JobRecord, JobSequenceInfo, JobWindowInfo, JobBatchInfo, BatchCallbackKind, JobState, DependencyMode, FinishMode, HistoryPolicy, RetryPolicy, SchedulerLimits } from './core/index.js';

// The client and what its calls take and return.
export { SchedulerClient, type EnqueueJobOptions, type ScheduleSpec, type DefinedScheduleSpec, type JobSpec, type BatchCallbacks, type BatchCallbackSpec } from './nest/index.js';
export type { JobWaitResult, WaitForOptions } from './worker/index.js';
export { declaredScheduleId } from './store/index.js';
export type {
  BatchCallbackIds,
  BatchCallbackJob,
  BatchCancelResult,
  BatchSummary,
  EnqueueBatchResult,
  ListBatchesParams,
  BlockedSequence,
  CancelResult,
  ConcurrencyLimit,
  DebounceOptions,
  Deduplicated,
  EnqueueResult,
  HistoryEntry,
  JobPage,
  LimitTarget,
  ListBlockedSequencesParams,
  ListGroupsParams,
  ListJobsParams,
  Rate,
  RateLimit,
  RateLimitStatus,
  Schedule,
  ScheduleInput,
  ScheduleListParams,
  ScheduleState,
  SequenceAfterFailure,
  SequenceOptions,
  ThrottleOptions,
  UniqueKeyMode,
  WaitingGroup,
} from './store/index.js';

// The checker of a store's own history (docs/verify.md).
export { readVerifyRuns, recordVerifyRun, verifyHistory, type ScheduledVerifyOptions, type VerifyOptions, type VerifyReport, type VerifyRule, type VerifyRun, type VerifyViolation } from './verify/index.js';

// Observers and attempt hooks.
export type { TransitionEvent, AttemptHook, AttemptHookContext, SchedulerLogger, JobLogFields, NodeHealth } from './worker/index.js';

// Observability: the trace context a job carries, and the names its spans and instruments use (docs/observability.md).
export { currentTraceContext, TELEMETRY_ATTRIBUTES, TELEMETRY_METRICS, type SchedulerTelemetryOptions } from './telemetry/index.js';
export type { TraceContext } from './core/index.js';
export { visibleText, type VisibleTextOptions } from './core/index.js';

// Errors an application may catch or throw.
export {
  SchedulerError,
  InvalidArgumentError,
  InvalidIdentifierError,
  PayloadTooLargeError,
  JobNotFoundError,
  ScheduleNotFoundError,
  BatchNotFoundError,
  IllegalTransitionError,
  CapabilityNotSupportedError,
  StoreBusyError,
  StoreUnavailableError,
  IncompatibleSchemaError,
  JobFailedError,
  JobWaitTimeoutError,
  JobWaitAbortedError,
  BatchWaitTimeoutError,
  BatchWaitAbortedError,
  JobWaiterClosedError,
  type FailedJobState,
  ProgressRefusedError,
  type SchedulerErrorCode,
} from './core/index.js';
export { PermanentJobError, JobTimeoutError } from './worker/index.js';
export type { JobSnooze } from './worker/index.js';

// The stores an application builds itself (a script, a busy timeout, a second DataSource).
export {
  MysqlJobStore,
  PostgresJobStore,
  SqliteJobStore,
  type MysqlJobStoreOptions,
  type PostgresJobStoreOptions,
  type SqliteJobStoreOptions,
} from './store/index.js';
export type { JobStore, StoreCapabilities } from './store/index.js';
