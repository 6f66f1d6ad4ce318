import { ManualClock } from '../../../lib/core/index.js';
import { MemoryJobStore } from '../../../lib/store/index.js';
import type { ConformanceTarget } from '../../../lib/store-kit/conformance/index.js';

export async function memoryTarget(): Promise<ConformanceTarget> {
  return {
    name: 'memory',
    async open(options) {
      const clock = new ManualClock();
      const store = new MemoryJobStore({ clock, limits: options?.limits, historyPolicy: options?.historyPolicy, finish: options?.finish });
      return {
        store,
        advance: async (ms) => clock.advance(ms),
        snapshot: async () => ({
          jobs: store.rows(),
          paused: store.pausedQueueNames(),
          schedules: store.scheduleRows(),
          audit: (await store.auditList({ limit: 1_000 })).length,
          history: store.historyEntries().length,
          limits: await store.concurrencyLimitList(),
          rateLimits: await store.rateLimitList(),
        }),
        countJobs: async () => store.rows().length,
      };
    },
    async teardown() {},
  };
}
