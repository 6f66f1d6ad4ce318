export * from './job.decorator.js';
export * from './inject-job-context.decorator.js';
export * from './inject-job-entity-manager.decorator.js';
export * from './on-job-transition.decorator.js';
