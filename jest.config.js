import { availableParallelism } from 'node:os';

/**
 * Jest runs in ESM mode: NestJS 12 ships ES modules only, and jest's CommonJS mode cannot load
 * them on Node 20. `npm test` sets NODE_OPTIONS=--experimental-vm-modules for that reason.
 * @type {import('jest').Config}
 */
export default {
  // jest's node environment, with each worker on its own embedded PostgreSQL (global-setup.mjs).
  testEnvironment: '<rootDir>/test/support/environment.mjs',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.spec.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  // swc strips the types, as tsc would with tsconfig.json (isolated modules, ES2022, legacy
  // decorators with their design-time metadata, which Nest's dependency injection reads). It does
  // not type-check: pretest's four tsc checks do that. It transforms a file about ten times
  // faster than ts-jest's transpileModule, and a clean clone transforms every file once.
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        swcrc: false,
        sourceMaps: 'inline',
        module: { type: 'es6' },
        jsc: {
          target: 'es2022',
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: true, verbatimModuleSyntax: true },
        },
      },
    ],
  },
  globalSetup: '<rootDir>/test/support/global-setup.mjs',
  globalTeardown: '<rootDir>/test/support/global-teardown.mjs',
  testTimeout: 60_000,
  // Jest runs a 2-core machine's suites one at a time; without a memory limit it runs them inside
  // its own process, where every file's ESM module graph stays reachable and the heap grows past
  // 1.8 GB by the 90th file, so garbage collection slows late suites several times over. A limit
  // moves them into a worker that is replaced once it holds more than this after a file.
  workerIdleMemoryLimit: '1GB',
  // The simulator's suites first, while the workers' heaps are small (sequencer.mjs says why).
  testSequencer: '<rootDir>/test/support/sequencer.mjs',
  // Two workers on a 2-core machine: a suite spends much of its time waiting on its server or on
  // processes it started, and the other worker runs meanwhile. Each needs a PostgreSQL server of its
  // own (global-setup.mjs says why), which only the embedded path has; a DATABASE_URL names one
  // server, so with it jest runs one worker. (`--maxWorkers` on the command line overrides this.)
  maxWorkers: process.env.DATABASE_URL ? 1 : Math.max(1, Math.min(4, availableParallelism())),
};
