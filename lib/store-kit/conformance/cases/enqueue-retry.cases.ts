import { describe, expect, it } from '@jest/globals';
import { InvalidArgumentError } from '../../../core/index.js';
import type { SuiteContext } from '../harness.js';
import { claimOne, mustGet } from './helpers.js';

export function enqueueRetryCases(ctx: SuiteContext): void {
  describe('issue 19 item 10: retry and maxAttempts per enqueue', () => {
    it('stores the retry fields given at enqueue with the job and returns them on every read, claims included', async () => {
      const h = await ctx.open();
      const fast = await h.store.jobEnqueue({ job: { name: 'r', payload: 1, retry: { baseDelayMs: 0 }, maxAttempts: 7 } });
      const full = await h.store.jobEnqueue({ job: { name: 'r', payload: 2, retry: { baseDelayMs: 250, maxDelayMs: 1_000, jitter: false } } });
      const plain = await h.store.jobEnqueue({ job: { name: 'r', payload: 3 } });
      const empty = await h.store.jobEnqueue({ job: { name: 'r', payload: 4, retry: {} } });
      expect(await mustGet(h.store, fast.id)).toMatchObject({ retry: { baseDelayMs: 0 }, maxAttempts: 7 });
      expect((await mustGet(h.store, full.id)).retry).toEqual({ baseDelayMs: 250, maxDelayMs: 1_000, jitter: false });
      expect((await mustGet(h.store, plain.id)).retry).toBeNull();
      expect((await mustGet(h.store, empty.id)).retry).toBeNull();
      expect(await claimOne(h.store)).toMatchObject({ id: fast.id, retry: { baseDelayMs: 0 } });
      expect((await h.store.jobList({ limit: 10 })).map((job) => job.retry)).toEqual([null, null, { baseDelayMs: 250, maxDelayMs: 1_000, jitter: false }, { baseDelayMs: 0 }]);
    });

    it('enqueueMany keeps each job its own retry fields', async () => {
      const h = await ctx.open();
      const [a, b] = await h.store.jobEnqueueMany({
        jobs: [
          { name: 'r', payload: 1, retry: { jitter: false } },
          { name: 'r', payload: 2, retry: { maxDelayMs: 5 } },
        ],
      });
      expect((await mustGet(h.store, a!.id)).retry).toEqual({ jitter: false });
      expect((await mustGet(h.store, b!.id)).retry).toEqual({ maxDelayMs: 5 });
    });

    it.each<[string, unknown, RegExp]>([
      ['the shorthand baseMs', { baseMs: 0 }, /^retry\.baseMs is not a retry option; the options are baseDelayMs, maxDelayMs and jitter\.$/],
      ['a string', 'fast', /^retry must be an object with some of baseDelayMs, maxDelayMs and jitter, got "fast"\.$/],
      ['null', null, /^retry must be an object/],
      ['an array', [0], /^retry must be an object/],
      ['a negative base', { baseDelayMs: -1 }, /^retry\.baseDelayMs must be a finite number of milliseconds at or above 0, got -1\.$/],
      ['a NaN base', { baseDelayMs: Number.NaN }, /^retry\.baseDelayMs must be a finite number/],
      ['a base past 100 years', { baseDelayMs: 1e13 }, /^retry\.baseDelayMs must be at most 3153600000000 milliseconds/],
      ['an infinite cap', { maxDelayMs: Number.POSITIVE_INFINITY }, /^retry\.maxDelayMs must be a finite number/],
      ['a cap below the base', { baseDelayMs: 10, maxDelayMs: 5 }, /^retry\.maxDelayMs must be a finite number of milliseconds at or above baseDelayMs \(10\), got 5\.$/],
      ['jitter that is not a boolean', { jitter: 'yes' }, /^retry\.jitter must be true or false, got "yes"\.$/],
    ])('refuses %s as retry before writing anything', async (_label, retry, pattern) => {
      const h = await ctx.open();
      await h.store.jobEnqueue({ job: { name: 'r', payload: 0 } });
      const before = await h.snapshot();
      const error = await h.store.jobEnqueue({ job: { name: 'r', payload: 1, retry: retry as never } }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as Error).message).toMatch(pattern);
      const inBatch = await h.store.jobEnqueueMany({ jobs: [{ name: 'r', payload: 1 }, { name: 'r', payload: 2, retry: retry as never }] }).catch((e: unknown) => e);
      expect((inBatch as Error).message).toMatch(/^jobs\[1\]\.retry/);
      expect(await h.snapshot()).toEqual(before);
    });
  });
}
