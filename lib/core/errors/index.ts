export * from './scheduler.error.js';
export * from './invalid-argument.error.js';
export * from './job-not-found.error.js';
export * from './illegal-transition.error.js';
export * from './capability-not-supported.error.js';
export * from './store-unavailable.error.js';
export * from './job-wait.errors.js';
export * from './progress-refused.error.js';
