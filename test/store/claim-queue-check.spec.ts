import { describe, expect, it } from '@jest/globals';
import { InvalidArgumentError } from '../../lib/core/index.js';
import { checkClaimParams } from '../../lib/store/checked/store-params.js';
import { resolveWorkerOptions } from '../../lib/worker/index.js';

/** A list that counts how often its names are read. */
function counted(names: readonly string[]): { list: readonly string[]; reads: () => number } {
  let reads = 0;
  const list = new Proxy(names, {
    get(target, prop, receiver) {
      if (typeof prop === 'string' && /^\d+$/.test(prop)) reads += 1;
      return Reflect.get(target, prop, receiver);
    },
  });
  return { list, reads: () => reads };
}

describe("a claim's queue list", () => {
  it('is checked once when it is frozen, as a worker passes it, so a claim of 1,000 queues does not check 1,000 names each time', () => {
    const { list, reads } = counted(Object.freeze(Array.from({ length: 1_000 }, (_, i) => `tenant-${i}`)));
    checkClaimParams({ workerId: 'w', limit: 1, queues: list, leaseMs: 1_000 });
    const first = reads();
    expect(first).toBeGreaterThanOrEqual(1_000);
    checkClaimParams({ workerId: 'w', limit: 1, queues: list, leaseMs: 1_000 });
    expect(reads()).toBe(first);
  });

  it('is checked on every claim when it can still change', () => {
    const queues = ['default'];
    checkClaimParams({ workerId: 'w', limit: 1, queues, leaseMs: 1_000 });
    queues[0] = 'not a queue';
    expect(() => checkClaimParams({ workerId: 'w', limit: 1, queues, leaseMs: 1_000 })).toThrow(InvalidArgumentError);
  });

  it('comes frozen out of the worker options', () => {
    expect(Object.isFrozen(resolveWorkerOptions({ queues: ['a', 'b', 'a'] }).queues)).toBe(true);
    expect(resolveWorkerOptions({ queues: ['a', 'b', 'a'] }).queues).toEqual(['a', 'b']);
  });
});
