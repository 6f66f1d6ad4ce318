import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { ANY_QUEUE, PostgresJobStore, SqliteJobStore, type JobStore } from '../../lib/store/index.js';
import { RateWake } from '../../lib/store/rate-wake.js';
import { dropSchemas, openPostgresDataSource, uniqueSchema } from '../support/postgres.js';

describe('RateWake', () => {
  afterEach(() => {
    jest.useRealTimers();
  });

  it('keeps the earliest wakes when a thousand are pending: the latest stands for the ones after it', () => {
    jest.useFakeTimers();
    const woken: number[] = [];
    const start = Date.now();
    const wake = new RateWake(() => woken.push(Date.now() - start));
    for (let i = 1; i <= 1_000; i++) wake.after(1_000 + 2 * i);
    // Full: an earlier ask still gets its wake, and a later one moves the last wake later.
    wake.after(10);
    wake.after(5_000);
    jest.advanceTimersByTime(10);
    expect(woken).toEqual([10]);
    jest.advanceTimersByTime(5_000);
    expect(woken).toHaveLength(1_000);
    expect(woken.at(-1)).toBe(5_000);
    wake.close();
  });

  it('wakes at each delay asked for, once per instant, and not after close', () => {
    jest.useFakeTimers();
    const woken: string[] = [];
    const wake = new RateWake((queue) => woken.push(queue));
    wake.after(500);
    wake.after(200);
    wake.after(900);
    jest.advanceTimersByTime(199);
    expect(woken).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(woken).toEqual([ANY_QUEUE]);
    // The later asks still wake, each at its time: a claim the first wake causes passes a spent key
    // by without reading its starts, so it could not ask again.
    jest.advanceTimersByTime(299);
    expect(woken).toHaveLength(1);
    jest.advanceTimersByTime(1);
    expect(woken).toHaveLength(2);
    jest.advanceTimersByTime(400);
    expect(woken).toHaveLength(3);
    jest.advanceTimersByTime(1_000);
    expect(woken).toHaveLength(3);
    // The same instant asked twice wakes once.
    wake.after(50);
    wake.after(50);
    jest.advanceTimersByTime(50);
    expect(woken).toHaveLength(4);
    jest.advanceTimersByTime(1_000);
    expect(woken).toHaveLength(4);
    wake.after(100);
    wake.close();
    jest.advanceTimersByTime(1_000);
    expect(woken).toHaveLength(4);
  });
});

/**
 * A claim that spends a key's last starts makes the store wake its own workers when the next start
 * frees: the hint arrives no earlier than that (a claim on it gets the job) and without any poll.
 */
async function wakesWhenTheNextStartFrees(store: JobStore): Promise<void> {
  const WINDOW_MS = 400;
  await store.rateLimitSet({ target: { key: 'api' }, rate: { max: 2, perMs: WINDOW_MS } });
  await store.jobEnqueueMany({ jobs: [0, 1, 2].map((i) => ({ name: 'call', payload: i, concurrencyKey: 'api' })) });
  let hinted!: () => void;
  const hint = new Promise<void>((resolve) => (hinted = resolve));
  const subscription = await store.subscribeWakeHints({ listener: (queue) => queue === ANY_QUEUE && hinted() });
  try {
    const claim = () => store.jobClaim({ workerId: 'w', limit: 10, queues: ['default'], leaseMs: 60_000 });
    const first = await claim();
    expect(first).toHaveLength(2);
    const spentAt = (await store.rateLimitStatus({ target: { key: 'api' } }))!;
    expect(spentAt.fullUntil).not.toBeNull();
    await hint;
    const third = await claim();
    expect(third.map((job) => job.payload)).toEqual([2]);
    // The job started no earlier than the window allows, by the store's clock.
    const after = (await store.rateLimitStatus({ target: { key: 'api' } }))!;
    expect(after.now.getTime()).toBeGreaterThanOrEqual(spentAt.fullUntil!.getTime());
  } finally {
    await subscription.close();
  }
}

/** Counts wake hints; `next()` resolves once one has come that no earlier `next()` took. */
class HintCount {
  private count = 0;
  private waiting: (() => void) | undefined;
  add(): void {
    this.count += 1;
    this.waiting?.();
  }
  async next(): Promise<void> {
    while (this.count === 0) await new Promise<void>((resolve) => (this.waiting = resolve));
    this.count -= 1;
  }
}

/**
 * A claim whose limit equals the key's free starts takes them all without seeing the jobs behind
 * them (a claim reads no more candidates than its limit): the wake must still come, or the rest
 * waits for a poll.
 */
async function wakesWhenAClaimTakesExactlyTheLastStarts(store: JobStore): Promise<void> {
  const WINDOW_MS = 400;
  await store.rateLimitSet({ target: { key: 'exact' }, rate: { max: 2, perMs: WINDOW_MS } });
  await store.jobEnqueueMany({ jobs: [0, 1, 2, 3].map((i) => ({ name: 'call', payload: i, queue: 'exact', concurrencyKey: 'exact' })) });
  const hints = new HintCount();
  const subscription = await store.subscribeWakeHints({ listener: (queue) => queue === ANY_QUEUE && hints.add() });
  try {
    const claim = () => store.jobClaim({ workerId: 'w', limit: 2, queues: ['exact'], leaseMs: 60_000 });
    expect((await claim()).map((job) => job.payload)).toEqual([0, 1]);
    // A wake an earlier case asked for may come first and find the key spent; the one this claim
    // asked for follows. Only hints end the wait: no claim runs without one.
    let next: unknown[] = [];
    for (let hint = 0; hint < 10 && next.length === 0; hint++) {
      await hints.next();
      next = (await claim()).map((job) => job.payload);
    }
    expect(next).toEqual([2, 3]);
  } finally {
    await subscription.close();
  }
}

describe('a store wakes its workers when a spent rate limit frees a start', () => {
  let dir: string;
  let sqlite: DataSource;
  let pg: DataSource;
  const schema = uniqueSchema('rwake');
  const stores: JobStore[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rate-wake-'));
    sqlite = await new DataSource({ type: 'better-sqlite3', database: join(dir, 'wake.db') }).initialize();
    pg = await openPostgresDataSource(4);
  });
  afterAll(async () => {
    await Promise.all(stores.map((store) => store.close()));
    await dropSchemas(pg, [schema]);
    await Promise.all([sqlite.destroy(), pg.destroy()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('on SQLite', async () => {
    const store = new SqliteJobStore({ dataSource: sqlite });
    stores.push(store);
    await store.migrate();
    await wakesWhenTheNextStartFrees(store);
    await wakesWhenAClaimTakesExactlyTheLastStarts(store);
  });

  it('on PostgreSQL', async () => {
    const store = new PostgresJobStore({ dataSource: pg, schema });
    stores.push(store);
    await store.migrate();
    await wakesWhenTheNextStartFrees(store);
    await wakesWhenAClaimTakesExactlyTheLastStarts(store);
  });
});
