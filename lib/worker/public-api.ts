/**
 * `nestjs-durable-scheduler/worker`: a worker node without NestJS, for scripts, benchmarks and
 * services not built with Nest. A `WorkerNode` claims, runs, heartbeats and drains like the
 * module's; handlers are plain functions (`FunctionInvoker`) or any `JobInvoker`. The stores come
 * from the root entry point.
 */
export { WorkerNode, defaultWorkerId, type WorkerNodeDeps, type WorkerStats } from './worker-node.js';
export {
  NodeEventEmitter,
  type AttemptStartedEvent,
  type ClaimFailedEvent,
  type LeaseLostEvent,
  type NodeStateChangedEvent,
  type SettledEvent,
  type WorkerNodeEvents,
} from './node-events.js';
export { resolveWorkerOptions, WORKER_DEFAULTS, type WorkerOptions, type ResolvedWorkerOptions } from './worker-options.js';
export { FunctionInvoker, type FunctionHandler, type FunctionBatchHandler } from './function-invoker.js';
export { MAX_BATCH_HANDLER_SIZE, MAX_BATCH_WAIT_MS, type BatchContext, type BatchHandlerOptions, type BatchJob } from './batch-handler.js';
export { JobWaiter, type JobWaiterOptions, type JobWaitResult, type WaitForOptions } from './job-waiter.js';
export { allFinishHints, nodeFinishHints, storeFinishHints, type FinishHints } from './finish-hints.js';
export type { JobInvoker, JobDefinition, PayloadValidator } from './job-invoker.js';
export { AttemptContext, type JobContext } from './job-context.js';
export type { AttemptHook, AttemptHookContext } from './attempt-hook.js';
export type { TransitionEvent, TransitionObserver } from './transition-observer.js';
export type { MaintenanceReport } from './maintenance.js';
export { silentLogger, type SchedulerLogger } from './scheduler-logger.js';
export { realTimers, type Timers } from './timers.js';
export type { ErrorLogDetail } from './log-text.js';
export { PermanentJobError } from './permanent-job.error.js';
export { DEFAULT_MAX_SNOOZES, type JobSnooze } from './job-snooze.js';
export { JobTimeoutError } from './attempt-executor.js';
export { ManualClock, SeededRandom, type Clock, type RandomSource } from '../core/index.js';
export { SystemClock } from '../store/index.js';
