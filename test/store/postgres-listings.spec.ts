import { beforeAll, describe, expect, it } from '@jest/globals';
import { JOB_STATES } from '../../lib/core/index.js';
import { LIST_SCAN_LIMIT, type PostgresJobStore } from '../../lib/store/index.js';
import { dataSource, freshStore, useAdapterDataSource } from '../support/postgres-adapter.js';
import { nodes, type PlanNode } from '../support/postgres-plans.js';

useAdapterDataSource();

const JOBS = 2 * LIST_SCAN_LIMIT;
/** The id-prefix and enqueue-time parameters ($6 to $8) of a listing that does not use them. */
const NO_FILTERS = [null, null, null];

/**
 * The plans of the listing and count statements at a size where a scan would show: 20,000 jobs
 * in every state, queue `rare` holding one job in a thousand, analyzed. Each statement's text is
 * the one the store sent; the plans are explained with the values each case names.
 */
describe('PostgreSQL listings and counts read indexes and count tables, never a scan of jobs', () => {
  let store: PostgresJobStore;
  const texts: string[] = [];
  /** The statement `work` sent that contains `marker`, and the planner settings it sent before it in its transaction. */
  const sent = async (work: () => Promise<unknown>, marker: string): Promise<{ text: string; settings?: string }> => {
    texts.length = 0;
    await work();
    const at = texts.findIndex((t) => t.includes(marker));
    expect(at).toBeGreaterThanOrEqual(0);
    return { text: texts[at]!, settings: texts.slice(0, at).find((t) => t.includes('set_config')) };
  };
  /** The plan of a statement as the store runs it: in a transaction, after the settings it sends first. */
  const explain = async ({ text, settings }: { text: string; settings?: string }, values: unknown[], analyze = false): Promise<PlanNode> =>
    dataSource.transaction(async (manager) => {
      if (settings) await manager.query(settings);
      const [row] = await manager.query(`EXPLAIN (FORMAT JSON${analyze ? ', ANALYZE' : ''}) ${text}`, values);
      return (row['QUERY PLAN'] as Array<{ Plan: PlanNode }>)[0]!.Plan;
    });
  const jobsNodes = (plan: PlanNode) => nodes(plan).filter((node) => node['Relation Name'] === 'jobs');
  /** A branch of the merge, below the projection (a Subquery Scan) PostgreSQL may put over it: the plan reads the same range either way. */
  const branch = (child: PlanNode) => (child['Node Type'] === 'Subquery Scan' ? child.Plans![0]! : child);

  beforeAll(async () => {
    store = freshStore({ onStatement: (text) => texts.push(text) });
    await store.migrate();
    const states = JOB_STATES.map((state) => `'${state}'`).join(', ');
    await dataSource.query(
      `INSERT INTO ${store.naming.jobs} (id, name, queue, payload, state, run_at, scheduled_for, max_attempts, attempt, leased_until, finished_at)
       SELECT gen_random_uuid(), 'job.' || (i % 4), CASE WHEN i % 1000 = 0 THEN 'rare' ELSE 'q' || (i % 3) END, '{"pad":"${'x'.repeat(64)}"}',
         s.state, now() - interval '1 minute', now(), 3, CASE WHEN s.state = 'running' THEN 1 ELSE 0 END,
         CASE WHEN s.state = 'running' THEN now() + interval '1 hour' END, CASE WHEN s.state IN ('succeeded', 'dead_lettered', 'cancelled', 'quarantined') THEN now() END
       FROM generate_series(1, ${JOBS}) i, LATERAL (SELECT (ARRAY[${states}])[1 + (i * 7919) % 7] AS state) s`,
    );
    await dataSource.query(`ANALYZE ${store.naming.jobs}`);
  });

  it('lists every state as a Merge Append of one bounded backward range of (state, seq) per state, with no sort', async () => {
    const text = await sent(() => store.jobListPage({ limit: 50 }), 'UNION ALL');
    const plan = await explain(text, [null, null, null, LIST_SCAN_LIMIT, 51, ...NO_FILTERS], true);
    expect(nodes(plan).filter((node) => node['Node Type'] === 'Sort')).toEqual([]);
    const merge = nodes(plan).filter((node) => node['Node Type'] === 'Merge Append');
    expect(merge).toHaveLength(1);
    expect(merge[0]!.Plans!.map(branch).map((child) => [child['Node Type'], child.Plans![0]!['Node Type'], child.Plans![0]!['Index Name'], child.Plans![0]!['Scan Direction']])).toEqual(
      JOB_STATES.map(() => ['Limit', 'Index Scan', 'jobs_state_seq_idx', 'Backward']),
    );
    expect(jobsNodes(plan).every((node) => node['Node Type'] === 'Index Scan' && node['Index Name'] === 'jobs_state_seq_idx')).toBe(true);
    // A page of 50 that every job matches reads 51 jobs (and the first of each other state), not 20,000.
    const read = jobsNodes(plan).reduce((sum, node) => sum + Number(node['Actual Rows']), 0);
    expect(read).toBeLessThanOrEqual(51 + JOB_STATES.length);
  });

  it('lists oldest first as a Merge Append of one forward range of (state, seq) per state, with no sort', async () => {
    const text = await sent(() => store.jobListPage({ order: 'oldest', limit: 50 }), 'UNION ALL');
    const plan = await explain(text, [null, null, null, LIST_SCAN_LIMIT, 51, ...NO_FILTERS], true);
    expect(nodes(plan).filter((node) => node['Node Type'] === 'Sort' || node['Node Type'] === 'Seq Scan')).toEqual([]);
    const merge = nodes(plan).filter((node) => node['Node Type'] === 'Merge Append');
    expect(merge).toHaveLength(1);
    expect(merge[0]!.Plans!.map(branch).map((child) => [child.Plans![0]!['Index Name'], child.Plans![0]!['Scan Direction']])).toEqual(
      JOB_STATES.map(() => ['jobs_state_seq_idx', 'Forward']),
    );
    const read = jobsNodes(plan).reduce((sum, node) => sum + Number(node['Actual Rows']), 0);
    expect(read).toBeLessThanOrEqual(51 + JOB_STATES.length);
  });

  it('stops a rare filter at the scan bound, and a page after a cursor looks the cursor up by its key', async () => {
    const first = await store.jobListPage({ queue: 'rare', limit: 50 });
    expect(first.jobs.length).toBeLessThan(50);
    expect(first.next).not.toBeNull();
    const text = await sent(() => store.jobListPage({ queue: 'rare', limit: 50, before: first.next! }), 'UNION ALL');
    const plan = await explain(text, [first.next, 'rare', null, LIST_SCAN_LIMIT, 51, ...NO_FILTERS], true);
    const scans = jobsNodes(plan);
    expect(scans.filter((node) => node['Index Name'] === 'jobs_pkey')).toHaveLength(1);
    expect(scans.filter((node) => node['Index Name'] !== 'jobs_pkey').every((node) => node['Index Name'] === 'jobs_state_seq_idx' && node['Scan Direction'] === 'Backward')).toBe(true);
    expect(nodes(plan).filter((node) => node['Node Type'] === 'Sort' || node['Node Type'] === 'Seq Scan')).toEqual([]);
    const merge = nodes(plan).find((node) => node['Node Type'] === 'Merge Append')!;
    expect(Number(merge['Actual Rows'])).toBe(LIST_SCAN_LIMIT);
  });

  it.each(JOB_STATES)('lists state %s as one backward range of (state, seq)', async (state) => {
    const text = await sent(() => store.jobListPage({ state, name: 'job.1', limit: 20 }), '$9::text');
    const plan = await explain(text, [null, null, 'job.1', LIST_SCAN_LIMIT, 21, ...NO_FILTERS, state]);
    const scans = jobsNodes(plan);
    expect(scans.map((node) => [node['Node Type'], node['Index Name'], node['Scan Direction']])).toEqual([['Index Scan', 'jobs_state_seq_idx', 'Backward']]);
    expect(nodes(plan).filter((node) => node['Node Type'] === 'Sort' || node['Node Type'] === 'Merge Append')).toEqual([]);
  });

  it('reads stats from the count tables and one probe of the claim index per priority, and the queue listing and the fold from the count tables alone', async () => {
    const stats = await sent(() => store.jobStats(), 'oldest');
    const plan = await explain(stats, []);
    const scans = jobsNodes(plan);
    expect(scans.length).toBeGreaterThan(0);
    // The claim index, and the parked jobs' run-time index for the ones a limit held back.
    expect(scans.every((node) => /^Index (Only )?Scan$/.test(String(node['Node Type'])) && ['jobs_claim_idx', 'jobs_parked_due_idx'].includes(String(node['Index Name'])))).toBe(true);
    expect(scans.map((node) => String(node['Index Cond']))).toContainEqual(expect.stringMatching(/^\(\(priority = p(_\d+)?\.v\) AND \(run_at <= now\(\)\)\)$/));
    expect(nodes(plan).some((node) => node['Node Type'] === 'Limit' && node.Plans![0]!['Relation Name'] === 'jobs')).toBe(true);
    const queues = await sent(() => store.queueList(), 'FULL JOIN');
    expect(jobsNodes(await explain(queues, []))).toEqual([]);
    const fold = await sent(() => store.jobCountsFold({ limit: 10 }), 'pg_try_advisory_xact_lock');
    expect(jobsNodes(await explain(fold, [10, 'key']))).toEqual([]);
    // And what they read is right.
    const counted = await dataSource.query(`SELECT queue, state, count(*)::int AS count FROM ${store.naming.jobs} GROUP BY queue, state ORDER BY queue, state`);
    expect((await store.jobStats()).counts).toEqual(counted);
  });
});
