import { describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { Job, SchedulerClient, type JobHandler } from '../../lib/index.js';
import { SchedulerTester, SchedulerTestingModule } from '../../lib/testing/index.js';
import { refusal } from '../support/refusal.js';

const ran: number[] = [];

@Job({ name: 'later.job', transaction: false })
class LaterJob implements JobHandler<{ n: number }> {
  async handle(payload: { n: number }) {
    ran.push(payload.n);
  }
}

describe('the testing kit refuses options it does not take', () => {
  it('issue 35 item 7: SchedulerTestingModule.forRoot refuses a misspelt option at once, in the kit\'s name', async () => {
    expect(await refusal(() => SchedulerTestingModule.forRoot({ inlin: true } as never))).toBe(
      'inlin is not a known SchedulerTestingModule option (did you mean inline?); see docs/testing.md for the options.',
    );
  });

  it('issue 35 item 7: drain and waitFor refuse a misspelt option without running or waiting for anything', async () => {
    ran.length = 0;
    const moduleRef = await Test.createTestingModule({ imports: [SchedulerTestingModule.forRoot()], providers: [LaterJob] }).compile();
    const app = await moduleRef.init();
    try {
      const client = app.get(SchedulerClient);
      const tester = app.get(SchedulerTester);
      const { id } = await client.enqueue('later.job', { n: 1 }, { delayMs: 60_000 });
      const before = tester.now().getTime();
      expect(await refusal(() => tester.drain({ advance: true } as never))).toBe(
        'advance is not a known drain option (did you mean advanceTime?); known options are advanceTime, maxJobs.',
      );
      expect(await refusal(() => tester.drain({ maxjobs: 5 } as never))).toMatch(/^maxjobs is not a known drain option \(did you mean maxJobs\?\)/);
      expect(await refusal(() => client.waitFor(id, { timeout: 5 } as never))).toMatch(/^timeout is not a known waitFor option \(did you mean timeoutMs\?\)/);
      // Refused before anything ran: the clock did not move and the job still waits.
      expect(tester.now().getTime()).toBe(before);
      expect(ran).toEqual([]);
      expect((await client.get(id))!.state).toBe('scheduled');
    } finally {
      await app.close();
    }
  });
});
