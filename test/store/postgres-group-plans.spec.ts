import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { PostgresJobStore } from '../../lib/store/index.js';
import { uniqueSchema } from '../support/postgres.js';
import { schemas, useAdapterDataSource } from '../support/postgres-adapter.js';
import { explainingDataSource, scansOf, type ExplainedPlan } from '../support/postgres-plans.js';

useAdapterDataSource();

/**
 * The groups listing on 60,000 jobs: 50,000 finished and ungrouped, a backlog of 8,000 due jobs in
 * one group and 40 small groups. It walks the group index (migration 0025) one probe per group of
 * its page and counts along it, so it never scans the jobs table, and the backlog costs it no more
 * than the count's cap.
 */
describe('PostgreSQL groups listing goes through the group index at 60,000 jobs', () => {
  let explained: DataSource;
  let plans: ExplainedPlan[];
  let store: PostgresJobStore;

  beforeAll(async () => {
    ({ explained, plans } = await explainingDataSource([], 1));
    const schema = uniqueSchema('pggroups');
    schemas.push(schema);
    store = new PostgresJobStore({ dataSource: explained, schema });
    await store.migrate();
    const { jobs } = store.naming;
    await explained.query(`INSERT INTO ${jobs} (id, name, queue, payload, state, run_at, scheduled_for, attempt, max_attempts, finished_at)
      SELECT gen_random_uuid(), 'n', 'default', '{}', 'succeeded', now() - interval '1 day', now() - interval '1 day', 1, 10, now() - interval '1 hour'
      FROM generate_series(1, 50000) i`);
    await explained.query(`INSERT INTO ${jobs} (id, name, queue, payload, state, run_at, scheduled_for, attempt, max_attempts, group_key, parked_key)
      SELECT gen_random_uuid(), 'n', 'default', '{}', 'scheduled', now() - interval '1 minute', now(), 0, 10, 'backlog', 'group:backlog'
      FROM generate_series(1, 8000) i`);
    for (let g = 0; g < 40; g++) await store.jobEnqueueMany({ jobs: [1, 2, 3].map((i) => ({ name: 'n', payload: i, group: `g${String(g).padStart(2, '0')}`, delayMs: i === 3 ? 60_000 : 0 })) });
    await explained.query(`ANALYZE ${jobs}`);
  });

  afterAll(async () => {
    await explained.destroy();
  });

  it('walks the group index a probe per group of its page, and counts along it up to the cap', async () => {
    let page: Awaited<ReturnType<typeof store.jobListGroups>> = [];
    const scans = await scansOf(plans, async () => (page = await store.jobListGroups({ limit: 5 })), 'jobs');
    expect(page.map((g) => g.group)).toEqual(['backlog', 'g00', 'g01', 'g02', 'g03']);
    expect(page[0]).toMatchObject({ due: 1_000, dueCapped: true, later: 0 });
    expect(page[1]).toMatchObject({ due: 2, dueCapped: false, later: 1, laterCapped: false });
    expect(scans.length).toBeGreaterThan(0);
    expect(scans.every((scan) => scan.endsWith('jobs_group_idx'))).toBe(true);

    const next = await scansOf(plans, async () => (page = await store.jobListGroups({ limit: 3, after: 'g37' })), 'jobs');
    expect(page.map((g) => g.group)).toEqual(['g38', 'g39']);
    expect(next.every((scan) => scan.endsWith('jobs_group_idx'))).toBe(true);
  });
});
