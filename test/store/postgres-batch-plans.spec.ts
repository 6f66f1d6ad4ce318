import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { PostgresJobStore } from '../../lib/store/index.js';
import { uniqueSchema } from '../support/postgres.js';
import { schemas, useAdapterDataSource } from '../support/postgres-adapter.js';
import { explainingDataSource, scansOf, type ExplainedPlan } from '../support/postgres-plans.js';

useAdapterDataSource();

/**
 * The batch reads on 50,000 jobs, 1,000 of them in 50 batches: each reaches the batch's jobs
 * through the batch index (migration 0023) and never scans the jobs table, and the listing walks
 * the distinct batch ids one index probe each, so its cost follows its page, not the jobs.
 */
describe('PostgreSQL batch reads go through the batch index at 50,000 jobs', () => {
  let explained: DataSource;
  let plans: ExplainedPlan[];
  let store: PostgresJobStore;
  const batches: string[] = [];

  beforeAll(async () => {
    ({ explained, plans } = await explainingDataSource([], 1));
    const schema = uniqueSchema('pgbatch');
    schemas.push(schema);
    store = new PostgresJobStore({ dataSource: explained, schema });
    await store.migrate();
    const { jobs } = store.naming;
    await explained.query(`INSERT INTO ${jobs} (id, name, queue, payload, state, run_at, scheduled_for, attempt, max_attempts, finished_at)
      SELECT gen_random_uuid(), 'n' || (i % 50), 'q' || (i % 20), '{}', (ARRAY['succeeded', 'cancelled', 'dead_lettered'])[1 + i % 3],
        now() - interval '1 day', now() - interval '1 day', 1, 10, now() - interval '1 hour'
      FROM generate_series(1, 49000) i`);
    for (let b = 0; b < 50; b++) {
      const jobsOf = Array.from({ length: 20 }, (_, i) => ({ name: 'item', payload: i }));
      batches.push((await store.jobEnqueueBatch({ jobs: jobsOf, onComplete: { name: 'done', payload: b } })).batchId);
    }
    await explained.query(`ANALYZE ${jobs}`);
  });

  afterAll(async () => {
    await explained.destroy();
  });

  const jobScans = (work: () => Promise<unknown>) => scansOf(plans, work, 'jobs');

  it('jobListBatches walks the batch index, a probe per batch of its page, and reads each batch through it', async () => {
    let page: Awaited<ReturnType<typeof store.jobListBatches>> = [];
    const scans = await jobScans(async () => (page = await store.jobListBatches({ limit: 5, before: batches[30] })));
    expect(page.map((batch) => batch.id)).toEqual(batches.slice(25, 30).reverse());
    expect(page[0]).toMatchObject({ total: 20, pending: 20, callbacks: [{ kind: 'complete', state: 'awaiting_parents' }] });
    // The listing's two probes (the first id, then the next below each), and one read per batch.
    expect(scans).toHaveLength(2 + 5);
    expect(scans.every((scan) => scan.endsWith('jobs_batch_idx'))).toBe(true);
  });

  it('jobBatch and the open jobs a batch cancel reads go through the batch index', async () => {
    const read = await jobScans(() => store.jobBatch({ batchId: batches[7]! }));
    expect(read.length).toBeGreaterThan(0);
    expect(read.every((scan) => scan.endsWith('jobs_batch_idx'))).toBe(true);
    const result = await store.jobCancelBatch({ batchId: batches[8]! });
    expect(result).toEqual({ cancelled: 21, cancelRequested: 0 });
    const open = await jobScans(() => store.jobCancelBatch({ batchId: batches[8]! }));
    expect(open.length).toBeGreaterThan(0);
    expect(open.every((scan) => scan.endsWith('jobs_batch_idx'))).toBe(true);
  });
});
