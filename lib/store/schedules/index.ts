export * from './schedule.types.js';
export * from './schedule.js';
export * from './schedule-input.js';
export * from './schedule-tx.js';
export * from './schedule-operations.js';
