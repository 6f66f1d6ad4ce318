import { describe } from '@jest/globals';
import { ManualClock } from '../../lib/core/index.js';
import { MemoryJobStore } from '../../lib/store/index.js';
import { badInputCases, STORE_LIMITS } from './bad-input.cases.js';
import { memoryState } from './hostile.js';

/** Everything but the clock, the wake-up hub and the injected probe and rules: the store's data. */
const NOT_DATA = ['clock', 'hints', 'probe', 'rules', 'capabilities', 'limits', 'historyPolicy'];

describe('bad input on the in-memory store', () => {
  badInputCases(async () => ({
    name: 'memory',
    async open() {
      const store = new MemoryJobStore({ clock: new ManualClock(Date.UTC(2030, 0, 1)), limits: STORE_LIMITS });
      return {
        store,
        snapshot: async () => memoryState(store, NOT_DATA),
        tables: async () => [],
      };
    },
    async teardown() {},
  }));
});
