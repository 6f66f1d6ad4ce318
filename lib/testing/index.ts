/**
 * `nestjs-durable-scheduler/testing`: what an application's tests use today. The in-memory store
 * runs on a manual clock, so time moves only when the test says; pass it as the module's `store`
 * option. `WorkerNode` with a `FunctionInvoker` runs handlers without NestJS, and its `sweep()`
 * and `settledOnce()` let a test run one maintenance pass or wait for one attempt.
 */
export { MemoryJobStore, type MemoryJobStoreOptions, type MemoryStoreProbe } from '../store/index.js';
export { SystemClock } from '../store/index.js';
export { ManualClock, type Clock } from '../core/index.js';
export { FunctionInvoker, WorkerNode, type FunctionHandler, type SettledEvent } from '../worker/index.js';
