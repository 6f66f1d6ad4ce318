export * from './json-value.js';
export * from './sql-identifier.js';
export * from './utf8.js';
export * from './job-fields.js';
export * from './trace-context.js';
export * from './known-options.js';
export * from './limit-target.js';
