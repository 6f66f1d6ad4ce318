import { describe, expect, it } from '@jest/globals';
import { InvalidArgumentError } from '../../lib/core/index.js';
import { MemoryJobStore } from '../../lib/store/index.js';
import { FunctionInvoker, resolveBatchOptions, WorkerNode, type FunctionBatchHandler } from '../../lib/worker/index.js';

// Issue 39 item 6: a batch handler's options are refused with one sentence before a node is built.
const handleBatch = () => undefined;

describe('batch handler options (issue 39 item 6)', () => {
  it.each([
    [{ size: 0 }, 'batch.size must be a whole number from 1 to 1,000, got 0.'],
    [{ size: 1_001 }, 'batch.size must be a whole number from 1 to 1,000, got 1001.'],
    [{ size: 2.5 }, 'batch.size must be a whole number from 1 to 1,000, got 2.5.'],
    [{ size: 10, waitMs: -1 }, 'batch.waitMs must be a whole number of milliseconds from 0 to 60,000, got -1.'],
    [{ size: 10, waitMs: 60_001 }, 'batch.waitMs must be a whole number of milliseconds from 0 to 60,000, got 60001.'],
    [{ size: 10, wait: 5 }, 'batch has no option "wait"; it takes size and waitMs.'],
    [10, 'batch must be an object { size, waitMs? }, got 10.'],
  ])('refuses %j', (value, message) => {
    expect(() => resolveBatchOptions(value)).toThrow(new InvalidArgumentError(message, 'batch'));
  });

  it('fills in waitMs 0', () => {
    expect(resolveBatchOptions({ size: 5 })).toEqual({ size: 5, waitMs: 0 });
  });

  it('refuses transaction: true and a missing handleBatch, naming the handler', () => {
    expect(() => new FunctionInvoker({ index: { batch: { size: 5 }, handleBatch, transaction: true } as FunctionBatchHandler })).toThrow(/the batch handler of "index" cannot set transaction: true/);
    expect(() => new FunctionInvoker({ index: { batch: { size: 5 } } as unknown as FunctionBatchHandler })).toThrow('the handler of "index" sets batch, so it needs a handleBatch(jobs, context) function.');
    expect(() => new FunctionInvoker({ index: { batch: { size: 0 }, handleBatch } })).toThrow('index.batch.size must be a whole number from 1 to 1,000, got 0.');
  });

  it('refuses a wait of half the lease or more when the node is built', () => {
    const invoker = new FunctionInvoker({ index: { batch: { size: 5, waitMs: 15_000 }, handleBatch } });
    expect(() => new WorkerNode({ store: new MemoryJobStore(), invoker, options: { leaseMs: 30_000 } })).toThrow(
      'the batch handler of "index" waits up to 15000 ms for its batch, which must be under half the lease (leaseMs 30000); lower batch.waitMs or raise leaseMs.',
    );
    expect(() => new WorkerNode({ store: new MemoryJobStore(), invoker, options: { leaseMs: 30_001 } })).not.toThrow();
  });
});
