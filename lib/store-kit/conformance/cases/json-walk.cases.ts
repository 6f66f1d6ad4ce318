import { expect, it } from '@jest/globals';
import { InvalidArgumentError, MAX_JSON_DEPTH_CEILING } from '../../../core/index.js';
import type { SuiteContext } from '../harness.js';
import { claimOne, mustGet } from './helpers.js';

/** Arrays nested `levels` deep around the number 1. */
function nested(levels: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = [value];
  return value;
}

/** An object whose `text` reads `ok` the first time and `later` every time after. */
function flipping(later: unknown): { value: object; reads: () => number } {
  let reads = 0;
  return {
    value: {
      get text() {
        return reads++ === 0 ? 'ok' : later;
      },
    },
    reads: () => reads,
  };
}

/** Issue 19, smaller bad-input gaps: what the store keeps is the value that was checked. */
export function jsonWalkCases(ctx: SuiteContext): void {
  it('issue 19: a payload, schedule payload and output at the maxJsonDepth ceiling of 1,000 are kept by every store', async () => {
    const h = await ctx.open({ limits: { maxJsonDepth: MAX_JSON_DEPTH_CEILING } });
    const deepest = nested(MAX_JSON_DEPTH_CEILING);
    const { id } = await h.store.jobEnqueue({ job: { name: 'deep', payload: deepest } });
    expect((await mustGet(h.store, id)).payload).toEqual(deepest);
    const { schedule } = await h.store.scheduleUpsert({ schedule: { name: 'deep', everyMs: 60_000, payload: deepest } });
    expect((await h.store.scheduleGet({ scheduleId: schedule.id }))!.payload).toEqual(deepest);
    const job = await claimOne(h.store, 'w');
    await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: job.id, attempt: job.attempt, kind: 'succeeded', output: deepest }] });
    expect((await mustGet(h.store, id)).output).toEqual(deepest);
    const before = await h.snapshot();
    const error = await h.store.jobEnqueue({ job: { name: 'deeper', payload: nested(MAX_JSON_DEPTH_CEILING + 1) } }).catch((e: unknown) => e as Error);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toBe('payload is nested more than 1000 levels deep.');
    expect(await h.snapshot()).toEqual(before);
  });

  it('issue 19: a getter that answers a good value first and a bad one later is stored with the good value, on every path', async () => {
    const h = await ctx.open();
    for (const later of ['a\u0000b', 'a\ud800b', nested(100)]) {
      const payload = flipping(later);
      const { id } = await h.store.jobEnqueue({ job: { name: 'flip', payload: payload.value } });
      expect((await mustGet(h.store, id)).payload).toEqual({ text: 'ok' });
      const schedulePayload = flipping(later);
      const { schedule } = await h.store.scheduleUpsert({ schedule: { name: 'flip', everyMs: 60_000, payload: schedulePayload.value } });
      expect((await h.store.scheduleGet({ scheduleId: schedule.id }))!.payload).toEqual({ text: 'ok' });
      const output = flipping(later);
      const job = await claimOne(h.store, 'w');
      await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: job.id, attempt: job.attempt, kind: 'succeeded', output: output.value }] });
      expect((await mustGet(h.store, job.id)).output).toEqual({ text: 'ok' });
      expect([payload.reads(), schedulePayload.reads(), output.reads()]).toEqual([1, 1, 1]);
    }
  });
}
