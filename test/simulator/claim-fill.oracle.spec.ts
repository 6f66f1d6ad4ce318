import { describe, expect, it } from '@jest/globals';
import { ClaimFillOracle } from '../../lib/simulator/index.js';
import { call, feed, row, running, T0, worker, write } from './history-builder.js';

describe('issue 35 item 1: claim fill oracle', () => {
  const producer = { kind: 'producer' } as const;
  const claim = (limit: number, taken: string[], at = T0) =>
    call('jobClaim', worker('w1'), [{ workerId: 'w1', limit, queues: ['default'], leaseMs: 5_000 }], taken.map((jobId) => ({ jobId, attempt: 1 })), at);
  const hot = (id: string) => row({ id, concurrencyKey: 'hot', priority: -3 });
  const plain = (id: string) => row({ id });

  it('counts a short claim that left a due job no limit holds back', () => {
    const oracle = new ClaimFillOracle(new Map([['hot', 1]]));
    // The old SQL claims: a claim of 2 read the hot key's two jobs, took one, and left the plain job.
    feed(oracle, [
      write(undefined, hot('h1')),
      write(undefined, hot('h2')),
      write(undefined, plain('p1')),
      call('jobEnqueueMany', producer, [], []),
      write(hot('h1'), running({ id: 'h1', concurrencyKey: 'hot', priority: -3 })),
      claim(2, ['h1']),
    ]);
    expect(oracle.report()).toMatchObject({ violations: 1, examples: [expect.stringContaining('leaving p1 due since')] });
  });

  it('accepts a short claim whose leftovers are all held back by a cap, future-dated, spent or of another queue', () => {
    const oracle = new ClaimFillOracle(new Map([['hot', 1]]));
    feed(oracle, [
      write(undefined, hot('h1')),
      write(undefined, hot('h2')),
      write(undefined, row({ id: 'later', runAt: T0 + 1 })),
      write(undefined, row({ id: 'spent', attempt: 3 })),
      write(undefined, row({ id: 'elsewhere', queue: 'other' })),
      write(undefined, plain('p1')),
      call('jobEnqueueMany', producer, [], []),
      write(hot('h1'), running({ id: 'h1', concurrencyKey: 'hot', priority: -3 })),
      write(plain('p1'), running({ id: 'p1' })),
      claim(8, ['h1', 'p1']),
    ]);
    expect(oracle.report().violations).toBe(0);
    expect(oracle.shortBesideHeld).toBe(1);
  });

  it('follows the caps the calls set: a removed cap holds nothing back, and a rate-limited key is left to the rate oracle', () => {
    const oracle = new ClaimFillOracle(new Map([['hot', 1]]));
    const limitSet = (max: number | null) => call('concurrencyLimitSet', { kind: 'operator' }, [{ target: { key: 'hot' }, max }], null);
    feed(oracle, [
      write(undefined, hot('h1')),
      write(undefined, hot('h2')),
      call('jobEnqueueMany', producer, [], []),
      write(hot('h1'), running({ id: 'h1', concurrencyKey: 'hot', priority: -3 })),
      claim(4, ['h1']),
      limitSet(null),
      claim(4, [], T0 + 1),
    ]);
    expect(oracle.report()).toMatchObject({ violations: 1, examples: [expect.stringContaining('leaving h2')] });

    const rated = new ClaimFillOracle(new Map());
    feed(rated, [
      call('rateLimitSet', { kind: 'operator' }, [{ target: { key: 'hot' }, rate: { max: 1, perMs: 1_000 } }], null),
      write(undefined, hot('h1')),
      call('jobEnqueueMany', producer, [], []),
      claim(4, []),
    ]);
    expect(rated.report().violations).toBe(0);
  });
});
