import { afterEach, describe, expect, it } from '@jest/globals';
import type { QueryRunner } from 'typeorm';
import type { PostgresJobStore } from '../../lib/store/index.js';
import { ManagerExecutor } from '../../lib/store/postgres/pg-executor.js';
import { claimUnlimitedQuery } from '../../lib/store/postgres/queries/claim-unlimited.query.js';
import { dataSource, freshStore, useAdapterDataSource } from '../support/postgres-adapter.js';

// Issue 37: while a transaction holds back vacuum's horizon, the entries claimed jobs leave in the
// claim index cannot be removed or marked dead, and a claim that reads each priority from its start
// walks all of them. Here an open transaction with an xid holds the horizon for real, the claims
// walk what a drain left, and the claims after them read from a cursor (claim-cursor.ts).

useAdapterDataSource();

const queues = ['cursor'];
const isCursor = (text: string) => text.includes('WITH paused AS') && text.includes('::timestamptz[]');
const isClaim = (text: string) => text.includes('WITH paused AS');

describe('PostgreSQL claims under a held horizon', () => {
  let holder: QueryRunner | undefined;
  afterEach(async () => {
    if (holder?.isTransactionActive) await holder.rollbackTransaction();
    await holder?.release();
    holder = undefined;
  });

  /** Holds an xid open, so no claimed job's entry can be removed until `holder` ends. */
  async function holdHorizon(): Promise<void> {
    holder = dataSource.createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    await holder.query('SELECT pg_current_xact_id()');
  }

  async function enqueue(store: PostgresJobStore, count: number, priority = 0, runAt?: Date): Promise<string[]> {
    const jobs = Array.from({ length: count }, (_, i) => ({ name: 'cursor.job', queue: 'cursor', payload: i, priority, ...(runAt ? { runAt } : {}) }));
    return (await store.jobEnqueueMany({ jobs })).map((job) => job.id);
  }

  /**
   * Claims and succeeds `count` due jobs, 200 at a time, each claim asked to search lapsed leases as
   * a poll tick's is; under a held horizon some of those read from the cursor, and a priority the
   * cursor does not list waits for the next that reads from the start.
   */
  async function drain(store: PostgresJobStore, count: number): Promise<number> {
    let done = 0;
    for (let claims = 0; done < count && claims < 100; claims++) {
      const jobs = await store.jobClaim({ workerId: 'w', limit: 200, queues, leaseMs: 60_000, includeLapsed: true });
      if (jobs.length > 0) await store.jobCompleteMany({ workerId: 'w', outcomes: jobs.map((j) => ({ jobId: j.id, attempt: j.attempt, kind: 'succeeded' as const })) });
      done += jobs.length;
    }
    return done;
  }

  it('reads from a cursor once a claim walked the entries a drain left, in claim order, and finds what lands behind it on the next claim that searches lapsed leases', async () => {
    const texts: string[] = [];
    const store = freshStore({ onStatement: (text) => texts.push(text) });
    await store.migrate();
    await holdHorizon();
    // 1,500 jobs at each of two priorities, claimed and finished under the held horizon: claims
    // from the start walk what the earlier ones left, and past a thousand entries the cursor is used.
    await enqueue(store, 1_500, 0);
    await enqueue(store, 1_500, 3);
    expect(await drain(store, 3_000)).toBe(3_000);
    expect(texts.filter(isClaim).some(isCursor)).toBe(true);
    // The next claim that reads from the start walks all 3,000 entries, and keeps the cursor on.
    for (let tick = 0; tick < 10 && isCursor(texts.filter(isClaim).at(-1)!); tick++) {
      expect(await store.jobClaim({ workerId: 'w', limit: 200, queues, leaseMs: 60_000, includeLapsed: true })).toEqual([]);
    }
    expect(isCursor(texts.filter(isClaim).at(-1)!)).toBe(false);

    // From here a claim reads each priority from its cursor, and still in claim order.
    const late = await enqueue(store, 2, 3);
    const early = await enqueue(store, 2, 0);
    const first = await store.jobClaim({ workerId: 'w', limit: 1, queues, leaseMs: 60_000, includeLapsed: false });
    expect(first.map((j) => j.id)).toEqual([early[0]]);
    expect(isCursor(texts.filter(isClaim).at(-1)!)).toBe(true);
    const next = await store.jobClaim({ workerId: 'w', limit: 10, queues, leaseMs: 60_000, includeLapsed: false });
    expect(next.map((j) => j.id)).toEqual([early[1], ...late]);
    expect(isCursor(texts.filter(isClaim).at(-1)!)).toBe(true);

    // Outcomes and the next claim in one statement read from the cursor too.
    const fresh = await enqueue(store, 1, 0);
    const both = await store.jobCompleteAndClaim!({
      workerId: 'w',
      outcomes: [...first, ...next].map((j) => ({ jobId: j.id, attempt: j.attempt, kind: 'succeeded' as const })),
      claim: { limit: 10, queues, leaseMs: 60_000, includeLapsed: false },
    });
    expect(both.results.map((r) => r.status)).toEqual(Array(first.length + next.length).fill('applied'));
    expect(both.jobs.map((j) => j.id)).toEqual(fresh);
    expect(isCursor(texts.filter(isClaim).at(-1)!)).toBe(true);

    // Behind the cursor: a job dated an hour back, and one of a priority no claim took yet. Claims
    // from the cursor pass them over, and so do the claims asked to search lapsed leases, but one
    // in ten of those, which reads from the start and takes them, urgent first.
    const hourAgo = await enqueue(store, 1, 0, new Date(Date.now() - 3_600_000));
    const urgent = await enqueue(store, 1, -5);
    const ahead = await enqueue(store, 1, 0);
    expect((await store.jobClaim({ workerId: 'w', limit: 10, queues, leaseMs: 60_000, includeLapsed: false })).map((j) => j.id)).toEqual(ahead);
    expect(isCursor(texts.filter(isClaim).at(-1)!)).toBe(true);
    const found: string[][] = [];
    for (let tick = 1; tick <= 10; tick++) {
      found.push((await store.jobClaim({ workerId: 'w', limit: 10, queues, leaseMs: 60_000, includeLapsed: true })).map((j) => j.id));
      expect(isCursor(texts.filter(isClaim).at(-1)!)).toBe(tick < 10);
    }
    expect(found).toEqual([...Array(9).fill([]), [...urgent, ...hourAgo]]);
  });

  it('reads every priority from its start while no claim walked far, as before', async () => {
    const texts: string[] = [];
    const store = freshStore({ onStatement: (text) => texts.push(text) });
    await store.migrate();
    await enqueue(store, 300, 0);
    expect(await drain(store, 300)).toBe(300);
    // Behind where the drain's claims began: a claim from a cursor would pass it over.
    const hourAgo = await enqueue(store, 1, 0, new Date(Date.now() - 3_600_000));
    expect((await store.jobClaim({ workerId: 'w', limit: 10, queues, leaseMs: 60_000, includeLapsed: false })).map((j) => j.id)).toEqual(hourAgo);
    expect(texts.filter(isClaim).some(isCursor)).toBe(false);
    // Only the claim that searches lapsed leases counts the entries it read; the claims between
    // poll ticks, most of them, carry nothing more than before.
    const counting = (text: string) => text.includes('pg_stat_get_xact_tuples_returned');
    expect(counting(texts.filter(isClaim).at(-1)!)).toBe(false);
    expect(texts.filter(isClaim).filter(counting).length).toBeGreaterThan(0);
  });

  it('counts only the entries its own statement read, however many its connection read just before', async () => {
    // The server's count is the session's since it last flushed its counts, at most once a second
    // and only between transactions: one transaction keeps the earlier read in it for certain, as
    // a second of busy claims on one connection may.
    const store = freshStore();
    await store.migrate();
    await enqueue(store, 1_500, 0);
    await dataSource.query(`ANALYZE ${store.naming.jobs}`);
    const claim = claimUnlimitedQuery(store.naming);
    const runner = dataSource.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction();
      await runner.query('SET LOCAL enable_seqscan = off');
      await runner.query('SET LOCAL enable_bitmapscan = off');
      const [read] = (await runner.query(`SELECT count(*)::int AS n FROM (SELECT 1 FROM ${store.naming.jobs} WHERE state = 'scheduled' AND parked_key IS NULL AND priority = 0 ORDER BY priority, run_at, seq LIMIT 100000) x`)) as { n: number }[];
      expect(read!.n).toBe(1_500);
      const walkedBefore = (await runner.query(`SELECT pg_stat_get_xact_tuples_returned('${store.naming.table('jobs_claim_idx')}'::regclass)::int AS n`)) as { n: number }[];
      expect(walkedBefore[0]!.n).toBeGreaterThanOrEqual(1_500);
      const claimed = await claim(new ManagerExecutor(runner.manager), { workerId: 'w', limit: 1, queues, leaseMs: 60_000, includeLapsed: true });
      expect(claimed.rows).toHaveLength(1);
      expect(claimed.walked).toBeGreaterThan(0);
      expect(claimed.walked).toBeLessThan(10);
    } finally {
      if (runner.isTransactionActive) await runner.rollbackTransaction();
      await runner.release();
    }
  });
});
