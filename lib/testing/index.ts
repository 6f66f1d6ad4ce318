/**
 * `nestjs-durable-scheduler/testing`: what an application's tests use. `SchedulerTestingModule`
 * runs the scheduler on a manual clock with no timer of its own, and `SchedulerTester` drains its
 * jobs, moves its time and checks what was enqueued (docs/testing.md). Below it, the parts: the
 * in-memory store on a manual clock, timers on that clock, and `WorkerNode` with a
 * `FunctionInvoker` to run handlers without NestJS (its `sweep()` and `settledOnce()` run one
 * maintenance pass or wait for one attempt).
 */
export { SchedulerTestingModule } from './scheduler-testing.module.js';
export { SchedulerTester } from './scheduler-tester.js';
export type { DrainOptions, DrainSummary, SchedulerTestingOptions } from './scheduler-testing.options.js';
export type { PayloadMatcher } from './payload-match.js';
export { DrainLimitError, SchedulerExpectationError } from './testing.errors.js';
export { ManualTimers } from './manual-timers.js';
export { MemoryJobStore, type MemoryJobStoreOptions, type MemoryStoreProbe } from '../store/index.js';
export { SystemClock } from '../store/index.js';
export { ManualClock, type Clock } from '../core/index.js';
export { FunctionInvoker, WorkerNode, type FunctionHandler, type FunctionBatchHandler, type SettledEvent } from '../worker/index.js';
