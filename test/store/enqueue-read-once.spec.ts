import { describe, expect, it } from '@jest/globals';
import { InvalidArgumentError } from '../../lib/core/index.js';
import { MemoryJobStore, type EnqueueInput } from '../../lib/store/index.js';

const PARENT = '0190a5b2-1c3d-7e4f-8a9b-0c1d2e3f4a5b';

/**
 * An enqueue input whose every field is a getter: it counts its reads, and returns the good value
 * for the first `goodReads` reads and `bad` after that.
 */
function counted(good: Record<string, unknown>, bad: unknown, goodReads = 1) {
  const reads: Record<string, number> = {};
  const input = {};
  for (const [key, value] of Object.entries(good)) {
    reads[key] = 0;
    Object.defineProperty(input, key, {
      enumerable: true,
      get: () => (++reads[key]! <= goodReads ? value : bad),
    });
  }
  return { input: input as EnqueueInput, reads };
}

const EVERY_FIELD = {
  name: 'orders.confirm',
  payload: { order: 1 },
  id: '0190a5b2-1c3d-7e4f-8a9b-0c1d2e3f4a6c',
  queue: 'orders',
  delayMs: 1_000,
  maxAttempts: 3,
  dependsOn: [PARENT],
  dependencyMode: 'on_any_terminal',
  concurrencyKey: 'tenant-1',
  concurrencyLimit: 2,
  uniqueKey: 'order-1',
  uniqueKeyMode: 'replace',
  retry: { baseDelayMs: 500 },
};

describe('enqueue reads each field of its input once', () => {
  it('issue 19 workerfix 3: every field of the input is read exactly once', async () => {
    const store = new MemoryJobStore();
    await store.jobEnqueue({ job: { id: PARENT, name: 'parent', payload: null } });
    const { input, reads } = counted(EVERY_FIELD, 'bad');
    const { id, created } = await store.jobEnqueue({ job: input });
    expect(created).toBe(true);
    expect(reads).toEqual(Object.fromEntries(Object.keys(EVERY_FIELD).map((key) => [key, 1])));
    expect(await store.jobGet({ jobId: id })).toMatchObject({ name: 'orders.confirm', queue: 'orders', maxAttempts: 3, concurrencyKey: 'tenant-1', uniqueKey: 'order-1', dependencyMode: 'on_any_terminal' });
  });

  it('issue 19 workerfix 3: a key that turns bad after it was checked is never written', async () => {
    const store = new MemoryJobStore();
    // Good while checked, a number when the writer would read it again.
    const { input } = counted({ name: 'orders.confirm', payload: {}, concurrencyKey: 'tenant-1' }, 42, 2);
    const { id } = await store.jobEnqueue({ job: input });
    expect((await store.jobGet({ jobId: id }))!.concurrencyKey).toBe('tenant-1');
  });

  it('issue 19 workerfix 3: a dependsOn array is copied once, so an element that turns bad after the check is never used', async () => {
    const store = new MemoryJobStore();
    await store.jobEnqueue({ job: { id: PARENT, name: 'parent', payload: null } });
    let elementReads = 0;
    const dependsOn = [PARENT];
    Object.defineProperty(dependsOn, 0, { enumerable: true, get: () => (++elementReads === 1 ? PARENT : 'not-a-uuid') });
    const { id } = await store.jobEnqueue({ job: { name: 'child', payload: {}, dependsOn } });
    expect(elementReads).toBe(1);
    expect((await store.jobGet({ jobId: id }))!.state).toBe('awaiting_parents');
  });

  it('issue 19 workerfix 3: a hole in dependsOn is refused, not skipped', async () => {
    const store = new MemoryJobStore();
    await store.jobEnqueue({ job: { id: PARENT, name: 'parent', payload: null } });
    // eslint-disable-next-line no-sparse-arrays
    await expect(store.jobEnqueue({ job: { name: 'child', payload: {}, dependsOn: [, PARENT] as string[] } })).rejects.toThrow(InvalidArgumentError);
    expect((await store.jobList()).map((job) => job.id)).toEqual([PARENT]);
  });
});
