export * from './decorators/index.js';
export * from './interfaces/index.js';
export * from './scheduler.module.js';
export * from './scheduler.client.js';
export { defineJob, type DefineJobOptions, type DefinedJob, type DefinedJobSpec, type PayloadOf } from './job-definition.js';
export * from './scheduler.orchestrator.js';
export * from './scheduler.tokens.js';
export { SCHEDULER_MODULE_OPTIONS } from './scheduler.module-definition.js';
export { createStore } from './scheduler-store.provider.js';
