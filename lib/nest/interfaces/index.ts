export * from './job-registry.interface.js';
export * from './job-handler.interface.js';
export * from './job-options.interface.js';
export * from './scheduler-module-options.interface.js';
