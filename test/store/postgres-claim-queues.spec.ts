import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { PostgresJobStore } from '../../lib/store/index.js';
import { databaseUrl } from '../support/postgres.js';
import { dataSource, freshStore, stores, useAdapterDataSource } from '../support/postgres-adapter.js';
import { nodes, type PlanNode } from '../support/postgres-plans.js';

useAdapterDataSource();

/** The 1,000 queues a worker serves in these tests. */
const QUEUES = Array.from({ length: 1_000 }, (_, k) => `q${k}`);
const isClaim = (text: string) => text.includes('WITH paused AS');
const JOINS = ['Nested Loop', 'Hash Join', 'Merge Join'];

/** The three claim statements: the unlimited one in both its forms, and the limited one. */
const FORMS = [
  { form: 'unlimited, lapsed leases searched', includeLapsed: true, limited: false },
  { form: 'unlimited, due jobs only', includeLapsed: false, limited: false },
  { form: 'limited', includeLapsed: true, limited: true },
] as const;
type Form = (typeof FORMS)[number];

/** Makes the claims of `store` take the form's statement, as a worker's would. */
async function useForm(store: PostgresJobStore, form: Form): Promise<void> {
  // A limit on some queue makes every claim the limited one; its room is never the point here.
  if (form.limited) await store.concurrencyLimitSet({ target: { queue: 'q999' }, max: 1_000 });
}

/** The statement's plan for worker 'w2' claiming up to 200 jobs, the generic one or a custom one. */
async function claimPlan(text: string, mode: 'force_generic_plan' | 'force_custom_plan'): Promise<PlanNode> {
  const client = new pg.Client({ connectionString: databaseUrl() });
  await client.connect();
  try {
    await client.query(`SET plan_cache_mode = ${mode}`);
    const lapsed = text.includes('lapsed AS');
    // The limited claim reads a window ($5) as wide as the batch in its first round.
    const windowed = text.includes('$5');
    // The limited claim also takes its turn from a lane and a group ($6 to $8), here none.
    await client.query(`PREPARE claim_plan(text, integer, integer${lapsed ? ', boolean' : ''}${windowed ? ', integer, text, text, text' : ''}) AS ${text}`);
    const { rows } = await client.query(`EXPLAIN (FORMAT JSON) EXECUTE claim_plan('w2', 200, 60000${lapsed ? ', true' : ''}${windowed ? ', 200, null, null, null' : ''})`);
    return (rows[0]['QUERY PLAN'] as Array<{ Plan: PlanNode }>)[0]!.Plan;
  } finally {
    await client.end();
  }
}

describe('PostgreSQL claims for a worker serving 1,000 queues', () => {
  describe('the plan', () => {
    const texts = new Map<string, string>();
    let store: PostgresJobStore;

    beforeAll(async () => {
      const sent: string[] = [];
      store = freshStore({ onStatement: (text) => sent.push(text) });
      await store.migrate();
      // Enough due jobs that reading 200 in index order beats sorting them all, by the planner's own
      // estimate, on a custom plan too (it takes a seq scan and a sort for 3,000).
      for (let i = 0; i < 10; i++) await store.jobEnqueueMany({ jobs: QUEUES.map((queue, k) => ({ name: 'plan', queue, payload: { k: i * 1_000 + k } })) });
      // The queues table keeps a row for every queue ever paused: here 2,000 of them, 3 still paused.
      await dataSource.query(`INSERT INTO ${store.naming.queues} (name, paused) SELECT 'q' || g, g < 3 FROM generate_series(0, 1999) g`);
      await dataSource.query(`ANALYZE ${store.naming.jobs}`);
      await dataSource.query(`ANALYZE ${store.naming.queues}`);
      for (const form of FORMS) {
        await useForm(store, form);
        sent.length = 0;
        expect(await store.jobClaim({ workerId: 'w1', limit: 1, queues: QUEUES, leaseMs: 60_000, includeLapsed: form.includeLapsed })).toHaveLength(1);
        texts.set(form.form, sent.filter(isClaim).at(-1)!);
      }
    });

    it.each(FORMS.flatMap((form) => (['force_generic_plan', 'force_custom_plan'] as const).map((mode) => ({ ...form, mode }))))(
      '$form ($mode): reads the claim index in order, the queues as a constant, the pauses through their index',
      async ({ form, mode, limited }) => {
        const text = texts.get(form)!;
        expect(text).toContain('"q999"');
        const plan = await claimPlan(text, mode);
        const due = nodes(plan).find((node) => node['Subplan Name'] === 'CTE due')!;
        expect(due['Node Type']).toBe('Limit');
        const within = nodes(due);
        // The due jobs come from the claim index alone, in its order: the priorities in use, each
        // an index-only probe, and for each one range of the index bounded by run_at. No sort, no
        // join but the loop over the priorities (none on the queue list), no list unnested.
        // The probes read the row (a plain index scan, which marks the entries of claimed jobs dead
        // as it passes them; see scheduledPriorities), never index-only.
        const onJobs = within.filter((node) => node['Relation Name'] === 'jobs');
        // The limited claim reads on its statement's clock (claim-limited.query.ts).
        const clock = limited ? 'statement_timestamp()' : 'now()';
        const jobScans = onJobs.filter((node) => String(node['Index Cond']).includes(`run_at <= ${clock}`));
        expect(jobScans.map((node) => `${node['Node Type']} ${node['Index Name']}`)).toEqual(['Index Scan jobs_claim_idx']);
        expect(String(jobScans[0]!['Index Cond'])).toBe(`((priority = ${String(jobScans[0]!['Index Cond']).match(/p(_\d+)?\.v/)![0]}) AND (run_at <= ${clock}))`);
        const probes = onJobs.filter((node) => !jobScans.includes(node));
        expect(probes.length).toBeGreaterThan(0);
        expect(new Set(probes.map((node) => `${node['Node Type']} ${node['Index Name']}`))).toEqual(new Set(['Index Scan jobs_claim_idx']));
        expect(within.filter((node) => JOINS.includes(node['Node Type'])).map((node) => node['Node Type'])).toEqual(['Nested Loop']);
        expect(within.filter((node) => node['Node Type'] === 'Sort' || node['Node Type'] === 'Function Scan')).toEqual([]);
        // Each row's queue is tested against a constant array, which PostgreSQL hashes; not one
        // computed at run time, which it would compare element by element.
        expect(String(jobScans[0]!.Filter)).toMatch(/\(queue = ANY \('\{q0,q1,q10,q100,q101,/);
        expect(String(jobScans[0]!.Filter)).not.toMatch(/ANY \(\$\d+\)/);
        // The pauses are read once, through the index of the paused queues.
        const queueReads = nodes(plan).filter((node) => node['Relation Name'] === 'queues' || String(node['Index Name']).startsWith('queues_'));
        expect(queueReads.length).toBeGreaterThan(0);
        expect(queueReads.filter((node) => node['Node Type'] === 'Seq Scan' || node['Index Name'] === 'queues_pkey')).toEqual([]);
        expect(queueReads.some((node) => node['Index Name'] === 'queues_paused_idx')).toBe(true);
      },
    );
  });

  describe.each(FORMS)('$form', (form) => {
    it('takes the due jobs of the listed queues in claim order, skipping unlisted and paused ones', async () => {
      const store = freshStore();
      await store.migrate();
      await useForm(store, form);
      await store.queuePause({ queue: 'q7' });
      const hour = 3_600_000;
      const base = Date.now() - hour;
      // Run times repeat, so enqueue order breaks ties; queues are spread over the whole list.
      const plan = Array.from({ length: 40 }, (_, i) => ({
        queue: i % 10 === 3 ? 'q7' : i % 10 === 5 ? (i % 20 === 5 ? 'other' : 'q1000') : QUEUES[(i * 337) % 1_000]!,
        runAt: new Date(i === 17 ? base + 2 * hour : base - (i % 4) * 1_000),
      }));
      const ids = (await store.jobEnqueueMany({ jobs: plan.map((job, k) => ({ name: 'order', payload: k, ...job })) })).map((result) => result.id);
      const expected = plan
        .map((job, k) => ({ ...job, id: ids[k]!, k }))
        .filter((job) => job.queue !== 'q7' && QUEUES.includes(job.queue) && job.runAt.getTime() < Date.now())
        .sort((a, b) => a.runAt.getTime() - b.runAt.getTime() || a.k - b.k)
        .map((job) => job.id);
      expect(expected).toHaveLength(31);
      const claim = async (limit: number) =>
        (await store.jobClaim({ workerId: 'w', limit, queues: QUEUES, leaseMs: 60_000, includeLapsed: form.includeLapsed })).map((job) => job.id);
      expect(await claim(100)).toEqual(expected);
      // Resumed, the paused queue's due jobs are taken, in claim order too.
      await store.queueResume({ queue: 'q7' });
      const resumed = plan
        .map((job, k) => ({ ...job, k }))
        .filter((job) => job.queue === 'q7')
        .sort((a, b) => a.runAt.getTime() - b.runAt.getTime() || a.k - b.k)
        .map((job) => ids[job.k]!);
      expect(resumed).toHaveLength(4);
      expect(await claim(100)).toEqual(resumed);
    });
  });

  describe('a statement prepared before a pause or resume', () => {
    // One connection whose plans are generic: every claim runs the statement it prepared first,
    // with the plan PostgreSQL made then, so only a pause read at run time can change what it takes.
    let single: DataSource;
    beforeAll(async () => {
      single = await new DataSource({ type: 'postgres', url: databaseUrl(), extra: { max: 1, options: '-c plan_cache_mode=force_generic_plan' } }).initialize();
    });
    afterAll(async () => {
      await single.destroy();
    });

    it.each(FORMS)('$form: applies every pause and resume that committed since', async (form) => {
      const operator = freshStore();
      await operator.migrate();
      const sent: string[] = [];
      const store = new PostgresJobStore({ dataSource: single, schema: operator.naming.schema, onStatement: (text) => sent.push(text) });
      stores.push(store);
      await useForm(store, form);
      const claim = async (limit: number) =>
        (await store.jobClaim({ workerId: 'w', limit, queues: QUEUES, leaseMs: 60_000, includeLapsed: form.includeLapsed })).map((job) => job.id);
      const enqueue = async (queue: string) => (await operator.jobEnqueue({ job: { name: 'pause', payload: null, queue } })).id;

      const a0 = await enqueue('q1');
      expect(await claim(1)).toEqual([a0]);
      // Paused by an operator on another connection, after the claim statement was prepared.
      await operator.queuePause({ queue: 'q1' });
      const a1 = await enqueue('q1');
      const b1 = await enqueue('q2');
      expect(await claim(10)).toEqual([b1]);
      if (form.includeLapsed) {
        // A lapsed lease of a paused queue waits for the resume too.
        await dataSource.query(`UPDATE ${operator.naming.jobs} SET leased_until = now() - interval '1 second' WHERE id = $1`, [a0]);
        expect(await claim(10)).toEqual([]);
      }
      await operator.queueResume({ queue: 'q1' });
      expect(await claim(10)).toEqual(form.includeLapsed ? [a0, a1] : [a1]);

      // Every claim sent the one text (beside, for the limited form, the unlimited claim that found
      // the limit), prepared once on the one connection, and ran its generic plan.
      const texts = new Set(sent.filter((text) => isClaim(text) && text.includes('wanted AS') === form.limited));
      expect(texts.size).toBe(1);
      const prepared = await single.query(`SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement = $1`, [[...texts][0]]);
      expect(prepared).toEqual([{ generic_plans: form.includeLapsed ? '4' : '3', custom_plans: '0' }]);
    });
  });
});
