import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { PostgresJobStore } from '../../lib/store/index.js';
import { uniqueSchema } from '../support/postgres.js';
import { schemas, useAdapterDataSource } from '../support/postgres-adapter.js';
import { explainingDataSource, nodes, scansOf, type ExplainedPlan } from '../support/postgres-plans.js';

useAdapterDataSource();

const DAY = 86_400_000;

/**
 * Each maintenance statement's plan on a table that holds far more retained work than due work:
 * 20,000 finished jobs, 60,000 history entries, 2,000 edges. The plans must reach what is due through
 * an index that holds it, so their cost follows the work due, not what is retained; bench/ shows the
 * same plans at 10 million rows.
 */
describe('PostgreSQL maintenance statements read what is due through an index', () => {
  let explained: DataSource;
  let plans: ExplainedPlan[];
  let store: PostgresJobStore;

  beforeAll(async () => {
    ({ explained, plans } = await explainingDataSource(['-c auto_explain.log_nested_statements=on'], 1));
    const schema = uniqueSchema('pgmaint');
    schemas.push(schema);
    store = new PostgresJobStore({ dataSource: explained, schema });
    await store.migrate();
    const { jobs, history, dependencies } = store.naming;
    // Retained work: succeeded jobs finished over the last day, 1 % of them past retention, each with
    // its enqueue entry (the trigger's) and two more (a claim and a success); a few jobs with long
    // histories; edges between finished jobs, a few still open; running jobs, a few with lapsed leases.
    await explained.query(`INSERT INTO ${jobs} (id, name, queue, payload, state, run_at, scheduled_for, attempt, max_attempts, finished_at, created_at, updated_at)
      SELECT gen_random_uuid(), 'n' || (i % 50), 'q' || (i % 20), '{"k":1}', 'succeeded', now() - interval '2 days', now() - interval '2 days', 1, 10,
        now() - (CASE WHEN i % 100 = 0 THEN 25 ELSE (i % 23) END) * interval '1 hour', now() - interval '2 days', now()
      FROM generate_series(1, 20000) i`);
    await explained.query(`INSERT INTO ${history} (job_id, name, state, attempt) SELECT id, name, s, 1 FROM ${jobs}, unnest(ARRAY['running', 'succeeded']) s`);
    await explained.query(`INSERT INTO ${history} (job_id, name, state, attempt) SELECT id, name, 'running', 1 FROM (SELECT id, name FROM ${jobs} LIMIT 10) j, generate_series(1, 80)`);
    await explained.query(`INSERT INTO ${dependencies} (child_id, parent_id, settled)
      SELECT c.id, p.id, p.rn % 200 <> 0 FROM (SELECT id, row_number() OVER (ORDER BY id) rn FROM ${jobs}) p
      JOIN (SELECT id, row_number() OVER (ORDER BY id DESC) rn FROM ${jobs}) c ON c.rn = p.rn WHERE p.rn <= 2000`);
    await explained.query(`INSERT INTO ${jobs} (id, name, queue, payload, state, run_at, scheduled_for, attempt, max_attempts, worker_id, leased_until)
      SELECT gen_random_uuid(), 'n', 'q', '{}', 'running', now(), now(), 3, 3, 'w', now() + (CASE WHEN i <= 5 THEN -1 ELSE 1 END) * interval '1 minute'
      FROM generate_series(1, 200) i`);
    await explained.query(`ANALYZE ${jobs}; ANALYZE ${history}; ANALYZE ${dependencies}`);
  });

  afterAll(async () => {
    await explained.destroy();
  });

  const scans = (work: () => Promise<unknown>, table: string) => scansOf(plans, work, table);

  it('the retention purge finds its jobs through the finished-jobs index and deletes history and edges by index', async () => {
    let purged = 0;
    const run = async () => (purged = await store.jobPurge({ olderThanMs: DAY, limit: 50 }));
    const jobs = await scans(run, 'jobs');
    expect(purged).toBe(50);
    expect(jobs).toContain('Index Scan jobs_finished_idx');
    expect(jobs.filter((scan) => scan.startsWith('Seq Scan'))).toEqual([]);
    const history = await scans(run, 'job_history');
    expect(history.filter((scan) => scan.startsWith('Seq Scan'))).toEqual([]);
    expect(history.some((scan) => scan.includes('job_history_job_idx'))).toBe(true);
    const edges = await scans(run, 'dependencies');
    expect(edges.filter((scan) => scan.startsWith('Seq Scan'))).toEqual([]);
    expect(edges.some((scan) => scan.includes('dependencies_parent_idx'))).toBe(true);
  });

  it('the history trim reads the log from its place through the primary key, and each job through its own index', async () => {
    let examined = 0;
    const history = await scans(async () => ({ examined } = await store.historyTrim({ keep: 64, limit: 1_000 })), 'job_history');
    expect(examined).toBe(1_000);
    expect(history).toContain('Index Scan job_history_pkey');
    expect(history.some((scan) => scan.includes('job_history_job_idx'))).toBe(true);
    expect(history.filter((scan) => scan.startsWith('Seq Scan'))).toEqual([]);
  });

  it('the lapsed-lease sweep reads the lease index', async () => {
    let swept = 0;
    const jobs = await scans(async () => (swept = (await store.jobExpireLeases({ limit: 100 })).length), 'jobs');
    expect(swept).toBe(5);
    expect(jobs).toContain('Index Scan jobs_lease_idx');
    expect(jobs.filter((scan) => scan.startsWith('Seq Scan'))).toEqual([]);
  });

  it('the dependency sweep reads only open edges, through the open-edge index', async () => {
    let settled = 0;
    const edges = await scans(async () => (settled = await store.jobSettleDependencies({ limit: 1_000 })), 'dependencies');
    expect(settled).toBeGreaterThan(0);
    expect(edges.some((scan) => scan.includes('dependencies_open_idx'))).toBe(true);
    expect(edges.filter((scan) => scan.startsWith('Seq Scan'))).toEqual([]);
  });

  it('a minting pass reads due schedules through the due index, and its write-back is no sequential scan', async () => {
    const { schedules } = store.naming;
    // 50,000 schedules, 100 of them due: the pass touches the 100 only.
    await explained.query(`INSERT INTO ${schedules} (id, name, queue, payload, max_attempts, interval_ms, anchor_at, next_fire_at, created_at, updated_at)
      SELECT gen_random_uuid(), 'm', 'q', '{}', 3, 10000, t, t, now(), now()
      FROM generate_series(1, 50000) i, LATERAL (SELECT now() + CASE WHEN i <= 100 THEN -interval '1 second' ELSE interval '1 hour' END AS t) tick`);
    await explained.query(`ANALYZE ${schedules}`);
    let minted = 0;
    const scanned = await scans(async () => (minted = (await store.scheduleMintDue({ limit: 1_000 })).minted.length), 'schedules');
    expect(minted).toBe(100);
    expect(scanned.some((scan) => scan.includes('schedules_due_idx'))).toBe(true);
    expect(scanned.filter((scan) => scan.startsWith('Seq Scan'))).toEqual([]);
  });

  it('the sweep lease is one row of the maintenance table', async () => {
    plans.length = 0;
    expect(await store.maintenanceLease({ task: 'sweep', workerId: 'w', leaseMs: 15_000 })).toBe(true);
    expect(plans.flatMap((plan) => nodes(plan.Plan)).filter((node) => node['Node Type'] === 'Seq Scan')).toEqual([]);
  });
});
