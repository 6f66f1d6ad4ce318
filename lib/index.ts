export * from './core/index.js';
export * from './store/index.js';
