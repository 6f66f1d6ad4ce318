// The contract lives in job-store.types.ts; this name stays so the adapters' and queries' imports
// need not move.
export type * from './job-store.types.js';
