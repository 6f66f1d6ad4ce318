import { describe } from '@jest/globals';
import { MemoryJobStore } from '../../lib/testing/index.js';
import { bootApp, producerOnlyCases } from './producer-only.cases.js';

describe('issue 19 item 14: producer-only apps, on one in-memory store', () => {
  producerOnlyCases(async () => {
    const store = new MemoryJobStore();
    return { boot: (options, providers) => bootApp([], { ...options, store }, providers), cleanup: async () => {} };
  });
});
