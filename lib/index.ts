export * from './core/index.js';
export * from './store/index.js';
export * from './worker/index.js';
export * from './nest/index.js';
