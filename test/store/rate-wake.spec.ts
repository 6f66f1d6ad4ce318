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

  it('wakes once, at the earliest delay asked for, and not after close', () => {
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
    jest.advanceTimersByTime(1_000);
    // The later asks were covered by the earlier wake: a claim it causes asks again if it must.
    expect(woken).toEqual([ANY_QUEUE]);
    wake.after(0);
    jest.advanceTimersByTime(1);
    expect(woken).toHaveLength(2);
    wake.after(100);
    wake.close();
    jest.advanceTimersByTime(1_000);
    expect(woken).toHaveLength(2);
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
  });

  it('on PostgreSQL', async () => {
    const store = new PostgresJobStore({ dataSource: pg, schema });
    stores.push(store);
    await store.migrate();
    await wakesWhenTheNextStartFrees(store);
  });
});
