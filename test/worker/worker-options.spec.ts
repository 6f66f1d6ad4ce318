import { describe, expect, it } from '@jest/globals';
import { MemoryJobStore } from '../../lib/store/index.js';
import { FunctionInvoker, resolveWorkerOptions, WorkerNode } from '../../lib/worker/index.js';

describe('worker options are resolved once', () => {
  it('returns options it already resolved as they are, frozen', () => {
    const resolved = resolveWorkerOptions({ concurrency: 3 });
    expect(resolveWorkerOptions(resolved)).toBe(resolved);
    expect(Object.isFrozen(resolved)).toBe(true);
    expect(resolved).toMatchObject({ concurrency: 3, leaseMs: 30_000, heartbeatIntervalMs: 10_000, queues: ['default'] });
  });

  it('checks a copy again: only what it returned counts as resolved', () => {
    const resolved = resolveWorkerOptions({ concurrency: 3 });
    const copy = { ...resolved, concurrency: 0 };
    expect(() => resolveWorkerOptions(copy)).toThrow('concurrency must be a whole number from 1 to 10000, got 0.');
    expect(resolveWorkerOptions({ ...resolved })).not.toBe(resolved);
    expect(resolveWorkerOptions({ ...resolved })).toEqual(resolved);
  });

  it('a WorkerNode given resolved options keeps that object', () => {
    const resolved = resolveWorkerOptions({ concurrency: 2, workerId: 'w-1' });
    const node = new WorkerNode({ store: new MemoryJobStore(), invoker: new FunctionInvoker({}), options: resolved });
    expect(node.options).toBe(resolved);
    expect(node.workerId).toBe('w-1');
  });
});
