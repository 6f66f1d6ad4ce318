import { describe, expect, it } from '@jest/globals';
import { IllegalTransitionError, InvalidArgumentError } from '../../../core/index.js';
import type { EnqueueInput, JobStore } from '../../../store/index.js';
import type { SuiteContext } from '../harness.js';
import { claimNone, claimOne, mustGet } from './helpers.js';

const id = (n: number) => `0190a5a0-0000-7000-8000-${String(n).padStart(12, '0')}`;
const digest = (extra: Partial<EnqueueInput> = {}): EnqueueInput => ({ name: 'digest.send', payload: { v: 1 }, uniqueKey: 'user:42', ...extra });

async function fail(store: JobStore, jobId: string, retryDelayMs = 0): Promise<void> {
  const job = await claimOne(store, 'w');
  expect(job.id).toBe(jobId);
  await store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId, attempt: job.attempt, kind: 'failed', error: 'boom', retryDelayMs }] });
}

async function succeed(store: JobStore, jobId: string): Promise<void> {
  const job = await claimOne(store, 'w');
  expect(job.id).toBe(jobId);
  await store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId, attempt: job.attempt, kind: 'succeeded' }] });
}

export function uniqueKeyCases(ctx: SuiteContext): void {
  describe('issue 19 item 9: uniqueKey, mode keep', () => {
    it('a second enqueue of a held key writes nothing and returns the holder, saying so', async () => {
      const h = await ctx.open();
      const first = await h.store.jobEnqueue({ job: digest() });
      expect(first).toEqual({ id: first.id, created: true });
      expect(await mustGet(h.store, first.id)).toMatchObject({ uniqueKey: 'user:42', payload: { v: 1 } });
      const before = await h.snapshot();
      const second = await h.store.jobEnqueue({ job: digest({ payload: { v: 2 }, delayMs: 60_000, queue: 'other', maxAttempts: 2 }) });
      expect(second).toEqual({ id: first.id, created: false, deduplicated: 'kept' });
      expect(await h.snapshot()).toEqual(before);
      // The key is per wire name; another key, or the same key on another name, is a new job.
      expect((await h.store.jobEnqueue({ job: digest({ uniqueKey: 'user:43' }) })).created).toBe(true);
      expect((await h.store.jobEnqueue({ job: digest({ name: 'digest.other' }) })).created).toBe(true);
      expect(await h.countJobs()).toBe(3);
    });

    it('a running or retrying holder keeps its key; finishing in any way frees it', async () => {
      const h = await ctx.open();
      const holder = (await h.store.jobEnqueue({ job: digest({ maxAttempts: 2 }) })).id;
      await claimOne(h.store, 'w');
      expect(await h.store.jobEnqueue({ job: digest() })).toEqual({ id: holder, created: false, deduplicated: 'kept' });
      await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: holder, attempt: 1, kind: 'failed', error: 'boom', retryDelayMs: 0 }] });
      expect(await h.store.jobEnqueue({ job: digest() })).toEqual({ id: holder, created: false, deduplicated: 'kept' });
      await fail(h.store, holder);
      expect((await mustGet(h.store, holder)).state).toBe('dead_lettered');

      const afterDeadLetter = await h.store.jobEnqueue({ job: digest() });
      expect(afterDeadLetter.created).toBe(true);
      await succeed(h.store, afterDeadLetter.id);
      const afterSuccess = await h.store.jobEnqueue({ job: digest() });
      expect(afterSuccess.created).toBe(true);
      await h.store.jobCancel({ jobId: afterSuccess.id });
      const afterCancel = await h.store.jobEnqueue({ job: digest() });
      expect(afterCancel.created).toBe(true);
      expect(new Set([holder, afterDeadLetter.id, afterSuccess.id, afterCancel.id]).size).toBe(4);
    });

    it('a caller-chosen id that exists wins over the key; a new caller-chosen id whose key is held returns the holder', async () => {
      const h = await ctx.open();
      await h.store.jobEnqueue({ job: digest({ id: id(1) }) });
      expect(await h.store.jobEnqueue({ job: digest({ id: id(1), uniqueKey: 'user:other' }) })).toEqual({ id: id(1), created: false });
      expect(await h.store.jobEnqueue({ job: digest({ id: id(2) }) })).toEqual({ id: id(1), created: false, deduplicated: 'kept' });
      expect(await h.store.jobGet({ jobId: id(2) })).toBeNull();
      expect(await h.countJobs()).toBe(1);
    });

    it('enqueueMany: a later job of the batch with a key an earlier one took returns that job', async () => {
      const h = await ctx.open();
      const results = await h.store.jobEnqueueMany({ jobs: [digest({ id: id(1) }), { name: 'plain', payload: 1 }, digest({ id: id(2), payload: { v: 2 } })] });
      expect(results[0]).toEqual({ id: id(1), created: true });
      expect(results[1]!.created).toBe(true);
      expect(results[2]).toEqual({ id: id(1), created: false, deduplicated: 'kept' });
      expect(await mustGet(h.store, id(1))).toMatchObject({ payload: { v: 1 } });
      expect(await h.countJobs()).toBe(2);
    });

    it('a dependant of a deduplicated job waits for the job that holds the key', async () => {
      const h = await ctx.open();
      const holder = (await h.store.jobEnqueue({ job: digest({ id: id(1) }) })).id;
      const results = await h.store.jobEnqueueMany({
        jobs: [
          digest({ id: id(2) }),
          { id: id(3), name: 'after', payload: 1, dependsOn: [id(2)] },
          digest({ id: id(4), uniqueKey: 'user:new' }),
          digest({ id: id(5), uniqueKey: 'user:new' }),
          { id: id(6), name: 'after', payload: 2, dependsOn: [id(5), id(4)] },
        ],
      });
      expect(results.map((r) => r.id)).toEqual([holder, id(3), id(4), id(4), id(6)]);
      expect(await mustGet(h.store, id(3))).toMatchObject({ state: 'awaiting_parents', pendingParents: 1 });
      // Both of its parents were the one job id(4): it waits for it once.
      expect(await mustGet(h.store, id(6))).toMatchObject({ state: 'awaiting_parents', pendingParents: 1 });
      await succeed(h.store, holder);
      while ((await h.store.jobSettleDependencies({ limit: 100 })) > 0);
      expect((await mustGet(h.store, id(3))).state).toBe('scheduled');
      expect((await mustGet(h.store, id(6))).state).toBe('awaiting_parents');
    });

    it('jobs a schedule mints carry no unique key', async () => {
      const h = await ctx.open();
      const { schedule } = await h.store.scheduleUpsert({ schedule: { id: id(9), name: 'digest.send', payload: {}, everyMs: 60_000 } });
      const minted = await h.store.scheduleTrigger({ scheduleId: schedule.id });
      expect(await mustGet(h.store, minted.id)).toMatchObject({ uniqueKey: null, scheduleId: schedule.id });
    });
  });

  describe('issue 19 item 9: uniqueKey, mode replace', () => {
    it('gives a holder that has not started the new payload and run time, which debounces it', async () => {
      const h = await ctx.open();
      const holder = await h.store.jobEnqueue({ job: digest({ delayMs: 1_000, maxAttempts: 3, queue: 'mail' }) });
      const historyBefore = await h.store.jobHistory({ jobId: holder.id });
      const replaced = await h.store.jobEnqueue({ job: digest({ payload: { v: 2 }, delayMs: 5_000, uniqueKeyMode: 'replace', maxAttempts: 9, queue: 'other' }) });
      expect(replaced).toEqual({ id: holder.id, created: false, deduplicated: 'replaced' });
      const job = await mustGet(h.store, holder.id);
      // Payload and run time move; everything else stays the holder's.
      expect(job).toMatchObject({ payload: { v: 2 }, queue: 'mail', maxAttempts: 3, state: 'scheduled', attempt: 0 });
      expect(job.runAt.getTime() - job.updatedAt.getTime()).toBe(5_000);
      expect(job.scheduledFor.getTime()).toBe(job.runAt.getTime());
      // Not a state change: no history entry.
      expect(await h.store.jobHistory({ jobId: holder.id })).toEqual(historyBefore);
      await h.advance(1_000);
      await claimNone(h.store, 'w', ['mail']);
      await h.advance(4_000);
      expect(await claimOne(h.store, 'w', ['mail'])).toMatchObject({ id: holder.id, payload: { v: 2 } });
      expect(await h.countJobs()).toBe(1);
    });

    it('can bring a holder forward to now', async () => {
      const h = await ctx.open();
      const holder = await h.store.jobEnqueue({ job: digest({ delayMs: 60_000 }) });
      await claimNone(h.store);
      expect((await h.store.jobEnqueue({ job: digest({ payload: { v: 3 }, uniqueKeyMode: 'replace' }) })).deduplicated).toBe('replaced');
      expect(await claimOne(h.store)).toMatchObject({ id: holder.id, payload: { v: 3 } });
    });

    it('keeps a holder that has started (running, or waiting to retry) and says so', async () => {
      const h = await ctx.open();
      const holder = (await h.store.jobEnqueue({ job: digest({ maxAttempts: 3 }) })).id;
      await claimOne(h.store, 'w');
      const running = await h.snapshot();
      expect(await h.store.jobEnqueue({ job: digest({ payload: { v: 2 }, uniqueKeyMode: 'replace' }) })).toEqual({ id: holder, created: false, deduplicated: 'kept' });
      expect(await h.snapshot()).toEqual(running);
      await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: holder, attempt: 1, kind: 'failed', error: 'boom', retryDelayMs: 60_000 }] });
      const retrying = await h.snapshot();
      expect(await h.store.jobEnqueue({ job: digest({ payload: { v: 2 }, uniqueKeyMode: 'replace' }) })).toEqual({ id: holder, created: false, deduplicated: 'kept' });
      expect(await h.snapshot()).toEqual(retrying);
    });

    it('replaces a holder that waits for its parents, which keeps waiting', async () => {
      const h = await ctx.open();
      const parent = (await h.store.jobEnqueue({ job: { name: 'parent', payload: 0 } })).id;
      const holder = (await h.store.jobEnqueue({ job: digest({ dependsOn: [parent] }) })).id;
      expect(await h.store.jobEnqueue({ job: digest({ payload: { v: 2 }, uniqueKeyMode: 'replace' }) })).toEqual({ id: holder, created: false, deduplicated: 'replaced' });
      expect(await mustGet(h.store, holder)).toMatchObject({ state: 'awaiting_parents', pendingParents: 1, payload: { v: 2 } });
    });

    it('in one batch the last replacement wins, whether the holder is stored or earlier in the batch', async () => {
      const h = await ctx.open();
      const stored = (await h.store.jobEnqueue({ job: digest() })).id;
      const results = await h.store.jobEnqueueMany({
        jobs: [
          digest({ payload: { v: 2 }, uniqueKeyMode: 'replace' }),
          digest({ payload: { v: 3 }, uniqueKeyMode: 'replace' }),
          digest({ id: id(7), uniqueKey: 'user:7', payload: { v: 'a' } }),
          digest({ uniqueKey: 'user:7', payload: { v: 'b' }, uniqueKeyMode: 'replace' }),
          digest({ uniqueKey: 'user:7', payload: { v: 'c' } }),
        ],
      });
      expect(results).toEqual([
        { id: stored, created: false, deduplicated: 'replaced' },
        { id: stored, created: false, deduplicated: 'replaced' },
        { id: id(7), created: true },
        { id: id(7), created: false, deduplicated: 'replaced' },
        { id: id(7), created: false, deduplicated: 'kept' },
      ]);
      expect((await mustGet(h.store, stored)).payload).toEqual({ v: 3 });
      expect((await mustGet(h.store, id(7))).payload).toEqual({ v: 'b' });
      expect(await h.countJobs()).toBe(2);
    });
  });

  describe('issue 19 item 9: replay and the host transaction', () => {
    it('refuses to replay a job whose key a newer unfinished job holds, until that job finishes', async () => {
      const h = await ctx.open();
      const old = (await h.store.jobEnqueue({ job: digest({ maxAttempts: 1 }) })).id;
      await fail(h.store, old);
      const newer = (await h.store.jobEnqueue({ job: digest() })).id;
      const before = await h.snapshot();
      const error = await h.store.jobReplay({ jobId: old }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(IllegalTransitionError);
      expect((error as Error).message).toBe(
        `Job ${old} cannot be replayed while job ${newer} holds its unique key "user:42" for digest.send; replay it once that job has finished, or cancel that job first.`,
      );
      expect(await h.snapshot()).toEqual(before);
      await succeed(h.store, newer);
      expect(await h.store.jobReplay({ jobId: old })).toMatchObject({ id: old, state: 'scheduled', uniqueKey: 'user:42' });
      expect(await h.store.jobEnqueue({ job: digest() })).toEqual({ id: old, created: false, deduplicated: 'kept' });
    });

    it('a key taken in a host transaction is held only if it commits', async () => {
      const h = await ctx.open();
      if (!h.hostTransaction) return expect(h.store.capabilities.transactionalEnqueue).toBe(false);
      await expect(
        h.hostTransaction(async (manager) => {
          expect((await h.store.jobEnqueue({ job: digest(), manager })).created).toBe(true);
          expect((await h.store.jobEnqueue({ job: digest({ payload: { v: 2 } }), manager })).deduplicated).toBe('kept');
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      expect(await h.countJobs()).toBe(0);
      const committed = await h.hostTransaction((manager) => h.store.jobEnqueue({ job: digest(), manager }));
      expect(committed.created).toBe(true);
      expect(await h.store.jobEnqueue({ job: digest() })).toEqual({ id: committed.id, created: false, deduplicated: 'kept' });
    });
  });

  describe('issue 19 item 9: bad unique keys', () => {
    it.each<[string, Partial<EnqueueInput>, RegExp]>([
      ['an empty key', { uniqueKey: '' }, /^uniqueKey must be 1 to 200 characters without control characters, got ""\.$/],
      ['a key that is not a string', { uniqueKey: 42 as never }, /^uniqueKey must be 1 to 200 characters/],
      ['a key of 201 characters', { uniqueKey: 'k'.repeat(201) }, /^uniqueKey must be 1 to 200 characters/],
      ['a key with a newline', { uniqueKey: 'a\nb' }, /^uniqueKey must be 1 to 200 characters/],
      ['a key with a lone surrogate', { uniqueKey: 'a\ud800' }, /^uniqueKey must be 1 to 200 characters/],
      ['an unknown mode', { uniqueKeyMode: 'merge' as never }, /^uniqueKeyMode must be "keep" or "replace", got "merge"\.$/],
      ['a mode without a key', { uniqueKey: undefined, uniqueKeyMode: 'replace' }, /^uniqueKeyMode needs a uniqueKey\.$/],
    ])('refuses %s before writing anything', async (_label, extra, pattern) => {
      const h = await ctx.open();
      await h.store.jobEnqueue({ job: digest() });
      const before = await h.snapshot();
      for (const call of [() => h.store.jobEnqueue({ job: digest(extra) }), () => h.store.jobEnqueueMany({ jobs: [{ name: 'ok', payload: 1 }, digest(extra)] })]) {
        const error = await call().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(InvalidArgumentError);
        expect((error as Error).message.replace(/^jobs\[1\]\./, '')).toMatch(pattern);
      }
      expect(await h.snapshot()).toEqual(before);
    });

    it('accepts quotes, dollars and long keys byte for byte', async () => {
      const h = await ctx.open();
      for (const key of [`o'brien`, 'a"b', 'a$$b', ';drop', 'ü✓🎉', 'k'.repeat(200)]) {
        const { id: jobId } = await h.store.jobEnqueue({ job: digest({ uniqueKey: key }) });
        expect((await mustGet(h.store, jobId)).uniqueKey).toBe(key);
        expect(await h.store.jobEnqueue({ job: digest({ uniqueKey: key }) })).toEqual({ id: jobId, created: false, deduplicated: 'kept' });
      }
    });
  });
}
