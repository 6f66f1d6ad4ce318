import { describe, expect, it } from '@jest/globals';
import { MemoryJobStore, normalizeEnqueueMany, type EnqueueInput } from '../../lib/store/index.js';
import { debounceFallbacks, enqueueResults, planUnique, uniqueSlot, windowSlot } from '../../lib/store/unique/unique-plan.js';
import { InvalidArgumentError, resolveLimits } from '../../lib/core/index.js';

const id = (n: number) => `0190a5a0-0000-7000-8000-${String(n).padStart(12, '0')}`;
const jobs = (inputs: EnqueueInput[]) => normalizeEnqueueMany(inputs, resolveLimits());
const keyed = (n: number, extra: Partial<EnqueueInput> = {}): EnqueueInput => ({ id: id(n), name: 'n', payload: n, uniqueKey: 'k', ...extra });

describe('issue 19 item 9: planUnique, the one decision every store applies', () => {
  it('leaves a batch without held keys as it is', () => {
    const batch = jobs([keyed(1), { id: id(2), name: 'n', payload: 2 }]);
    const plan = planUnique(batch, new Map());
    expect(plan.insert).toEqual(batch);
    expect(plan.replace).toEqual([]);
    expect(enqueueResults(batch, new Set([id(1), id(2)]), plan)).toEqual([
      { id: id(1), created: true },
      { id: id(2), created: true },
    ]);
  });

  it('rewrites a stored holder only if it never started, and maps dependants to the holder', () => {
    const stored = new Map([[uniqueSlot('n', 'k'), { id: id(9), state: 'scheduled' as const, attempt: 0 }], [uniqueSlot('n', 'r'), { id: id(8), state: 'scheduled' as const, attempt: 1 }]]);
    const batch = jobs([
      keyed(1, { uniqueKeyMode: 'replace', payload: 'new' }),
      keyed(2, { uniqueKey: 'r', uniqueKeyMode: 'replace' }),
      { id: id(3), name: 'after', payload: 0, dependsOn: [id(1), id(2)] },
    ]);
    const plan = planUnique(batch, stored);
    expect(plan.insert.map((job) => [job.id, job.dependsOn])).toEqual([[id(3), [id(9), id(8)]]]);
    expect(plan.replace).toEqual([{ id: id(9), payload: '"new"', runAt: null, delayMs: 0 }]);
    expect(enqueueResults(batch, new Set([id(3)]), plan, new Set([id(9)]))).toEqual([
      { id: id(9), created: false, deduplicated: 'replaced' },
      { id: id(8), created: false, deduplicated: 'kept' },
      { id: id(3), created: true },
    ]);
    // The rewrite lost a race (a claim took the holder first): the result says kept.
    expect(enqueueResults(batch, new Set([id(3)]), plan, new Set())[0]).toEqual({ id: id(9), created: false, deduplicated: 'kept' });
  });

  it('a job that depends on a later job of the batch holding its own key depends on itself: refused as a cycle', async () => {
    const store = new MemoryJobStore();
    const error = await store.jobEnqueueMany({ jobs: [keyed(1, { dependsOn: [id(2)] }), keyed(2)] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toBe(`dependsOn forms a cycle: ${id(1)} -> ${id(1)}.`);
    expect(store.rows()).toEqual([]);
  });
});

describe('issue 39 item 4: planUnique with debounce and throttle windows', () => {
  const debounced = (n: number): EnqueueInput => ({ id: id(n), name: 'n', payload: n, debounce: { key: 'k', windowMs: 1_000 } });
  const throttled = (n: number): EnqueueInput => ({ id: id(n), name: 'n', payload: n, throttle: { key: 'k', windowMs: 1_000 } });

  it('hands a stored debounce holder the last payload of the batch, with a fallback for a holder that started meanwhile', () => {
    const stored = new Map([[windowSlot('debounce', 'n', 'k'), { id: id(9), state: 'scheduled' as const, attempt: 0 }]]);
    const batch = jobs([debounced(1), debounced(2)]);
    const plan = planUnique(batch, stored);
    expect(plan.insert).toEqual([]);
    expect(plan.replace).toEqual([{ id: id(9), payload: '2', runAt: null, delayMs: 1_000, fallback: batch[1] }]);
    expect(enqueueResults(batch, new Set(), plan, new Set([id(9)]))).toEqual([
      { id: id(9), created: false, deduplicated: 'debounced' },
      { id: id(9), created: false, deduplicated: 'debounced' },
    ]);
    // A claim took the holder before the rewrite: the last job is inserted, and the batch points at it.
    expect(debounceFallbacks(plan, new Set())).toEqual([batch[1]]);
    expect(enqueueResults(batch, new Set([id(2)]), plan, new Set())).toEqual([
      { id: id(2), created: false, deduplicated: 'debounced' },
      { id: id(2), created: true },
    ]);
    expect(debounceFallbacks(plan, new Set([id(9)]))).toEqual([]);
  });

  it('drops the jobs a throttle window holds, stored or opened earlier in the batch; kinds never share a slot', () => {
    const stored = new Map([[windowSlot('throttle', 'n', 'k'), { id: id(9), state: 'succeeded' as const, attempt: 1 }]]);
    expect(enqueueResults(jobs([throttled(1)]), new Set(), planUnique(jobs([throttled(1)]), stored))).toEqual([{ id: id(9), created: false, deduplicated: 'throttled' }]);
    const batch = jobs([throttled(1), throttled(2), debounced(3), keyed(4)]);
    const plan = planUnique(batch, new Map());
    expect(plan.insert.map((job) => job.id)).toEqual([id(1), id(3), id(4)]);
    expect(enqueueResults(batch, new Set([id(1), id(3), id(4)]), plan)[1]).toEqual({ id: id(1), created: false, deduplicated: 'throttled' });
    expect(new Set([uniqueSlot('n', 'k'), windowSlot('debounce', 'n', 'k'), windowSlot('throttle', 'n', 'k')]).size).toBe(3);
  });

  it('a later debounce of the batch sets the run time its own window asks for, capped by the first job\'s end', () => {
    const batch = (first: { windowMs: number; maxDelayMs: number }, later: number) =>
      planUnique(
        jobs([
          { id: id(1), name: 'n', payload: 1, debounce: { key: 'k', ...first } },
          { id: id(2), name: 'n', payload: 2, debounce: { key: 'k', windowMs: later } },
        ]),
        new Map(),
      ).insert.map((job) => [job.payload, job.delayMs]);
    expect(batch({ windowMs: 10_000, maxDelayMs: 25_000 }, 1_000)).toEqual([['2', 1_000]]);
    expect(batch({ windowMs: 1_000, maxDelayMs: 2_000 }, 10_000)).toEqual([['2', 2_000]]);
  });
});
