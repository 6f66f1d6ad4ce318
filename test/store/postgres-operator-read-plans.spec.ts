import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { PostgresJobStore } from '../../lib/store/index.js';
import { uniqueSchema } from '../support/postgres.js';
import { schemas, useAdapterDataSource } from '../support/postgres-adapter.js';
import { explainingDataSource, scansOf, type ExplainedPlan } from '../support/postgres-plans.js';

useAdapterDataSource();

const HOUR = 3_600_000;

/**
 * The plans of the operator's reads on 50,000 jobs, most of them finished within the last day: each
 * must reach its rows through an index and never scan the jobs table, so its cost follows its bound
 * (a page, a limit, the due jobs, an hour of finished jobs), not what is retained.
 */
describe('PostgreSQL operator reads go through an index at 50,000 jobs', () => {
  let explained: DataSource;
  let plans: ExplainedPlan[];
  let store: PostgresJobStore;
  let hub: string;
  let child: string;

  beforeAll(async () => {
    ({ explained, plans } = await explainingDataSource([], 1));
    const schema = uniqueSchema('pgops');
    schemas.push(schema);
    store = new PostgresJobStore({ dataSource: explained, schema });
    await store.migrate();
    const { jobs, dependencies } = store.naming;
    // Finished jobs over the last day in three end states, then due work in 20 queues, some of it running.
    await explained.query(`INSERT INTO ${jobs} (id, name, queue, payload, state, run_at, scheduled_for, attempt, max_attempts, finished_at, created_at, updated_at)
      SELECT gen_random_uuid(), 'n' || (i % 50), 'q' || (i % 20), '{"k":1}', (ARRAY['succeeded', 'succeeded', 'cancelled', 'dead_lettered'])[1 + i % 4],
        now() - interval '2 days', now() - interval '2 days', 1, 10, now() - (i % 1440) * interval '1 minute', now() - interval '2 days', now()
      FROM generate_series(1, 45000) i`);
    await explained.query(`INSERT INTO ${jobs} (id, name, queue, payload, state, run_at, scheduled_for, max_attempts)
      SELECT gen_random_uuid(), 'n', 'q' || (i % 20), '{}', 'scheduled', now() - (i % 600) * interval '1 second', now(), 10
      FROM generate_series(1, 5000) i`);
    // 20,000 edges between finished jobs; one parent with 300 more dependants, and one child of 50 parents.
    await explained.query(`INSERT INTO ${dependencies} (child_id, parent_id, settled)
      SELECT c.id, p.id, true FROM (SELECT id, row_number() OVER (ORDER BY id) rn FROM ${jobs}) p
      JOIN (SELECT id, row_number() OVER (ORDER BY id DESC) rn FROM ${jobs}) c ON c.rn = p.rn WHERE p.rn <= 20000`);
    [{ id: hub }] = await explained.query(`SELECT id FROM ${jobs} WHERE state = 'succeeded' LIMIT 1`);
    await explained.query(`INSERT INTO ${dependencies} (child_id, parent_id, settled) SELECT id, $1, true FROM ${jobs} WHERE state = 'cancelled' LIMIT 300`, [hub]);
    [{ id: child }] = await explained.query(`SELECT id FROM ${jobs} WHERE state = 'scheduled' LIMIT 1`);
    await explained.query(`INSERT INTO ${dependencies} (child_id, parent_id, settled) SELECT $1, id, true FROM ${jobs} WHERE state = 'dead_lettered' LIMIT 50`, [child]);
    await store.concurrencyLimitSet({ target: { queue: 'q1' }, max: 5 });
    await explained.query(`ANALYZE ${jobs}; ANALYZE ${dependencies}`);
    expect(await store.jobClaim({ workerId: 'w', limit: 5, queues: ['q1'], leaseMs: 60_000 })).toHaveLength(5);
  });

  afterAll(async () => {
    await explained.destroy();
  });

  const scans = (work: () => Promise<unknown>, table: string) => scansOf(plans, work, table);

  const seqScans = (found: string[]) => found.filter((scan) => scan.startsWith('Seq Scan'));

  it('jobEdges reads the edge key for parents and the parent index for dependants, and each job by its key', async () => {
    let edges = await scans(async () => expect((await store.jobEdges({ jobId: hub, limit: 100 }))!.dependantsTruncated).toBe(true), 'dependencies');
    expect(seqScans(edges)).toEqual([]);
    expect(edges.some((scan) => scan.includes('dependencies_parent_idx'))).toBe(true);
    edges = await scans(async () => expect((await store.jobEdges({ jobId: child, limit: 10 }))!.parentsTruncated).toBe(true), 'dependencies');
    expect(seqScans(edges)).toEqual([]);
    expect(edges.some((scan) => scan.includes('dependencies_pkey'))).toBe(true);
    const jobs = await scans(() => store.jobEdges({ jobId: hub, limit: 100 }), 'jobs');
    expect(jobs.length).toBeGreaterThan(0);
    expect(jobs.every((scan) => scan.includes('jobs_pkey'))).toBe(true);
  });

  it('limitHolders reads the held slots of one limit through the slot index, and their jobs by key', async () => {
    let result: Awaited<ReturnType<typeof store.limitHolders>> | undefined;
    const slots = await scans(async () => (result = await store.limitHolders({ target: { queue: 'q1' }, limit: 3 })), 'concurrency_slots');
    expect(result!.holders).toHaveLength(3);
    expect(result!.truncated).toBe(true);
    expect(seqScans(slots)).toEqual([]);
    expect(slots.every((scan) => scan.includes('concurrency_slots_free_idx'))).toBe(true);
    const jobs = await scans(() => store.limitHolders({ target: { queue: 'q1' } }), 'jobs');
    expect(seqScans(jobs)).toEqual([]);
  });

  it('queueOldestDue reads the claim index in order, one range per priority in use, once for every queue', async () => {
    let result: Awaited<ReturnType<typeof store.queueOldestDue>> | undefined;
    const jobs = await scans(async () => (result = await store.queueOldestDue()), 'jobs');
    expect(result!.queues).toHaveLength(20);
    expect(result!.examinedUntil).toBeNull();
    // The priorities in use, each one probe, then one range of the index per priority, and the
    // parked jobs by run time: indexes alone, never a scan of the table.
    const only = (found: string[]) => new Set(found);
    const indexes = new Set(['Index Scan jobs_claim_idx', 'Index Scan jobs_parked_due_idx']);
    expect(only(jobs)).toEqual(indexes);
    expect(only(await scans(() => store.queueOldestDue({ queues: ['q3', 'nowhere'] }), 'jobs'))).toEqual(indexes);
  });

  it('jobThroughput reads each finished-jobs index newest first, for all queues or one', async () => {
    const since = new Date(Date.now() - HOUR);
    let result: Awaited<ReturnType<typeof store.jobThroughput>> | undefined;
    for (const queue of [undefined, 'q7']) {
      const jobs = await scans(async () => (result = await store.jobThroughput({ since, bucketMs: 60_000, queue })), 'jobs');
      expect(jobs.sort()).toEqual(['Index Scan jobs_dead_letter_idx', 'Index Scan jobs_finished_idx']);
      expect(result!.partialUntil).toBeNull();
      // About 1,875 jobs finished in the hour (45,000 over 1,440 minutes); a twentieth of them in q7.
      const total = result!.buckets.reduce((sum, b) => sum + b.succeeded + b.cancelled + b.deadLettered, 0);
      expect(total).toBeGreaterThan(queue === undefined ? 1_800 : 80);
    }
  });

  it('job listings with the new filters and the oldest order read the (state, seq) index and stop at their page', async () => {
    const cases = [
      { idPrefix: '0' },
      { enqueuedAfter: new Date(Date.now() - HOUR) },
      { order: 'oldest' as const },
      { order: 'oldest' as const, state: 'succeeded' as const, idPrefix: 'ab', enqueuedBefore: new Date() },
    ];
    for (const params of cases) {
      const jobs = await scans(() => store.jobListPage({ ...params, limit: 20 }), 'jobs');
      expect(seqScans(jobs)).toEqual([]);
      expect(jobs.filter((scan) => !scan.includes('jobs_pkey')).every((scan) => scan.includes('jobs_state_seq_idx'))).toBe(true);
    }
  });

  it('issue 35 item 9: a page of queues reads the counts and queues keys in order, at 20,000 queues, and never the jobs', async () => {
    const { counts, queues } = store.naming;
    await explained.query(`INSERT INTO ${counts} (queue, state, count) SELECT 'many-' || lpad(i::text, 5, '0'), s, 1 FROM generate_series(1, 20000) i, unnest(ARRAY['scheduled', 'succeeded']) s`);
    await explained.query(`INSERT INTO ${queues} (name, paused) SELECT 'many-' || lpad(i::text, 5, '0'), true FROM generate_series(1, 20000, 7) i`);
    await explained.query(`ANALYZE ${counts}; ANALYZE ${queues}`);
    let page: Awaited<ReturnType<typeof store.queueList>> = [];
    const countScans = await scans(async () => (page = await store.queueList({ limit: 100, after: 'many-00100' })), 'job_counts');
    expect(page.map((queue) => queue.name)).toEqual(Array.from({ length: 100 }, (_, i) => `many-${String(101 + i).padStart(5, '0')}`));
    expect(page[0]).toEqual({ name: 'many-00101', paused: false, counts: { scheduled: 1, succeeded: 1 } });
    expect(page[5]!.paused).toBe(true);
    expect(seqScans(countScans)).toEqual([]);
    expect(seqScans(await scans(() => store.queueList({ limit: 100, after: 'many-00100' }), 'queues'))).toEqual([]);
    expect(await scans(() => store.queueList({ limit: 100 }), 'jobs')).toEqual([]);
    expect(seqScans(await scans(() => store.queueList({ queues: ['many-00007', 'q3'] }), 'job_counts'))).toEqual([]);
    expect((await store.jobCountTotals()).queues).toBe(20_020);
  });
});
