export * from './sim-settings.js';
export * from './sim-event.js';
export * from './simulation.js';
export * from './seed-batch.js';
export * from './virtual-scheduler.js';
export * from './oracles/index.js';
export * from './sabotage/mutants.js';
