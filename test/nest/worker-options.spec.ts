import { describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { SchedulerModule, SchedulerOrchestrator } from '../../lib/nest/index.js';
import { SCHEDULER_WORKER_OPTIONS } from '../../lib/nest/scheduler.tokens.js';
import { MemoryJobStore } from '../../lib/store/index.js';

describe('SchedulerModule resolves the worker options once', () => {
  it('the worker runs on the very object the module resolved at boot', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [SchedulerModule.forRoot({ store: new MemoryJobStore(), autoStart: false, concurrency: 4, queues: ['a', 'a', 'b'] })],
    }).compile();
    const app = await moduleRef.init();
    try {
      const resolved = app.get(SCHEDULER_WORKER_OPTIONS);
      expect(app.get(SchedulerOrchestrator).node.options).toBe(resolved);
      expect(resolved).toMatchObject({ concurrency: 4, queues: ['a', 'b'], leaseMs: 30_000 });
    } finally {
      await app.close();
    }
  });
});
