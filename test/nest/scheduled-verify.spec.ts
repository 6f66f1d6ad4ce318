import { afterEach, describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { INestApplicationContext } from '@nestjs/common';
import { InvalidArgumentError, SchedulerModule, readVerifyRuns } from '../../lib/index.js';
import type { JobStore } from '../../lib/store/index.js';
import { SCHEDULER_STORE } from '../../lib/nest/scheduler.tokens.js';
import { MemoryJobStore, SchedulerTester, SchedulerTestingModule } from '../../lib/testing/index.js';
import { SchedulerOrchestrator } from '../../lib/nest/scheduler.orchestrator.js';

const HOUR = 3_600_000;

/** Lets the store's promises run until `done` holds: a signal, never a sleep. */
async function until(done: () => Promise<boolean>): Promise<void> {
  for (let turn = 0; turn < 1_000; turn++) {
    if (await done()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  expect(await done()).toBe(true);
}

describe('issue 40: the module\'s scheduled verify', () => {
  let app: INestApplicationContext | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('verifies on a worker node when the app starts and again each everyMs, recording each run for the Guarantees page', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [TypeOrmModule.forRoot({ type: 'better-sqlite3', database: ':memory:' }), SchedulerTestingModule.forRoot({ store: 'sqlite', verify: { everyMs: HOUR } })],
    }).compile();
    app = await moduleRef.init();
    const tester = app.get(SchedulerTester);
    const store = app.get<JobStore>(SCHEDULER_STORE);
    await store.jobEnqueue({ job: { name: 'work', payload: 1, delayMs: HOUR * 24 } });
    await tester.advance(0);
    await until(async () => (await readVerifyRuns(store)).length === 1);
    await tester.advance(HOUR);
    await until(async () => (await readVerifyRuns(store)).length === 2);
    const [last] = await readVerifyRuns(store);
    expect(last).toMatchObject({ actor: 'scheduled', violationCount: 0, until: null });
    expect(last!.checked.entries).toBeGreaterThan(0);
  });

  it('is off unless asked for, and refused on a node that runs no worker', async () => {
    app = await (await Test.createTestingModule({ imports: [SchedulerModule.forRoot({ store: new MemoryJobStore(), autoStart: false })] }).compile()).init();
    expect(app.get(SchedulerOrchestrator).scheduledVerify).toBeNull();
    await app.close();
    app = undefined;
    for (const [options, message] of [
      [{ worker: false, verify: true }, 'verify runs on worker nodes, as the other maintenance does, but worker is false on this one; set it on a worker node.'],
      [{ verify: 'daily' }, 'verify must be true, false or { everyMs?, windowMs? }, got "daily".'],
    ] as const) {
      const refused = await Test.createTestingModule({ imports: [SchedulerModule.forRoot({ store: new MemoryJobStore(), ...(options as object) })] })
        .compile()
        .then((ref) => ref.init())
        .catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(InvalidArgumentError);
      expect((refused as Error).message).toBe(message);
    }
  });
});
