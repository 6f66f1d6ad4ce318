import { describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { databaseUrl } from '../support/postgres.js';
import { dataSource, freshStore, useAdapterDataSource } from '../support/postgres-adapter.js';
import { claimScans, nodes, type PlanNode } from '../support/postgres-plans.js';
import { tracked, untilWaiting } from '../support/lock-waits.js';

useAdapterDataSource();

describe('PostgreSQL claims', () => {
  it('skips rows another transaction has locked instead of waiting for them', async () => {
    const store = freshStore();
    await store.migrate();
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await store.jobEnqueue({ job: { name: 'lock', payload: i } })).id);
    const blocker = new pg.Client({ connectionString: databaseUrl() });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query(`SELECT id FROM ${store.naming.jobs} WHERE id = $1 FOR UPDATE`, [ids[0]]);
      // The server says whether the claim waits for the locked row: it either finishes, or shows up
      // in pg_stat_activity waiting on a lock. No timer decides it, so a slow machine cannot.
      const claim = tracked(store.jobClaim({ workerId: 'w', limit: 10, queues: ['default'], leaseMs: 30_000 }));
      expect(await untilWaiting(dataSource, store.naming.jobs, claim.isDone)).toBe(false);
      const result = await claim.promise;
      expect(result.map((j) => j.id)).toEqual([ids[1], ids[2]]);
    } finally {
      await blocker.query('ROLLBACK');
      await blocker.end();
    }
    const [last] = await store.jobClaim({ workerId: 'w', limit: 10, queues: ['default'], leaseMs: 30_000 });
    expect(last?.id).toBe(ids[0]);
  });

  it('never starts the lapsed-lease scan of a claim that leaves lapsed leases out', async () => {
    const texts: string[] = [];
    const store = freshStore({ onStatement: (text) => texts.push(text) });
    await store.migrate();
    await store.jobEnqueueMany({ jobs: Array.from({ length: 4 }, (_, k) => ({ name: 'plan', payload: k })) });
    await store.jobClaim({ workerId: 'w1', limit: 2, queues: ['default'], leaseMs: 1 });
    const claim = texts.find((text) => text.includes('WITH paused AS'))!;
    const client = new pg.Client({ connectionString: databaseUrl() });
    await client.connect();
    try {
      await client.query(`PREPARE claim_run(text, integer, integer, boolean) AS ${claim}`);
      /** How often the `lapsed` step's table scans ran, and what the claim took, in a transaction rolled back. */
      const run = async (includeLapsed: boolean) => {
        await client.query('BEGIN');
        try {
          const { rows } = await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE claim_run('w2', 10, 60000, ${includeLapsed})`);
          const plan = (rows[0]['QUERY PLAN'] as Array<{ Plan: PlanNode }>)[0]!.Plan;
          const lapsed = nodes(plan).find((node) => node['Subplan Name'] === 'CTE lapsed')!;
          // Left out, the scan is either planned away (a custom plan folds the parameter) or never run.
          const scans = nodes(lapsed).filter((node) => node['Relation Name'] !== undefined);
          return { scanLoops: scans.reduce((sum, node) => sum + Number(node['Actual Loops']), 0), rows: nodes(plan).find((node) => node['Node Type'] === 'ModifyTable')!['Actual Rows'] };
        } finally {
          await client.query('ROLLBACK');
        }
      };
      // The 1 ms leases of w1 have lapsed: searched, they are taken with the two due jobs.
      expect(await run(true)).toEqual({ scanLoops: 1, rows: 4 });
      expect(await run(false)).toEqual({ scanLoops: 0, rows: 2 });
      // The same with the generic plan PostgreSQL may switch a prepared statement to.
      await client.query(`SET plan_cache_mode = force_generic_plan`);
      expect(await run(false)).toEqual({ scanLoops: 0, rows: 2 });
      expect(await run(true)).toEqual({ scanLoops: 1, rows: 4 });
    } finally {
      await client.end();
    }
  });

  it('leaves lapsed leases out with a claim statement that has no lapsed step, and searches them with the other', async () => {
    const texts: string[] = [];
    const store = freshStore({ onStatement: (text) => texts.push(text) });
    await store.migrate();
    const ids = (await store.jobEnqueueMany({ jobs: [0, 1, 2].map((k) => ({ name: 'due.only', payload: k })) })).map((result) => result.id);
    const [first] = await store.jobClaim({ workerId: 'w1', limit: 1, queues: ['default'], leaseMs: 30_000 });
    expect(first?.id).toBe(ids[0]);
    // A full batch starts the statistics guard without waiting for it; let it finish first, so its
    // statements are not counted as the claims' below.
    await store.statistics;
    // Its lease has lapsed by the database's clock, which is the one claims read.
    await dataSource.query(`UPDATE ${store.naming.jobs} SET leased_until = now() - interval '1 second' WHERE id = $1`, [first!.id]);
    texts.length = 0;
    const dueOnly = await store.jobClaim({ workerId: 'w2', limit: 10, queues: ['default'], leaseMs: 30_000, includeLapsed: false });
    expect(dueOnly.map((job) => job.id)).toEqual(ids.slice(1));
    expect(texts).toHaveLength(1);
    expect(texts[0]).toMatch(/^\s*WITH paused AS/);
    expect(texts[0]).not.toContain('lapsed AS');
    texts.length = 0;
    const searched = await store.jobClaim({ workerId: 'w2', limit: 10, queues: ['default'], leaseMs: 30_000, includeLapsed: true });
    expect(searched.map((job) => [job.id, job.attempt, job.lastError])).toEqual([[ids[0], 2, 'lease expired']]);
    expect(texts).toHaveLength(1);
    expect(texts[0]).toContain('lapsed AS');
  });

  it('analyzes a jobs table without statistics after a full claim, so claims read the claim index in order', async () => {
    const texts: string[] = [];
    const store = freshStore({ onStatement: (text) => texts.push(text) });
    await store.migrate();
    // Autovacuum stays out of it, so the statistics can only come from the store.
    await dataSource.query(`ALTER TABLE ${store.naming.jobs} SET (autovacuum_enabled = false)`);
    const stats = async () => Number((await dataSource.query(`SELECT count(*) AS n FROM pg_stats WHERE schemaname = $1 AND tablename = 'jobs' AND attname = 'state'`, [store.naming.schema]))[0].n);
    await store.jobEnqueueMany({ jobs: Array.from({ length: 50 }, (_, k) => ({ name: 'stats', payload: k })) });
    // A batch that is not full suggests no backlog: nothing is analyzed.
    expect(await store.jobClaim({ workerId: 'w1', limit: 100, queues: ['default'], leaseMs: 30_000 })).toHaveLength(50);
    expect(await store.statistics).toBe(false);
    expect(await stats()).toBe(0);
    for (let i = 0; i < 3; i++) await store.jobEnqueueMany({ jobs: Array.from({ length: 1_000 }, (_, k) => ({ name: 'stats', payload: { k, pad: 'x'.repeat(80) } })) });
    texts.length = 0;
    expect(await store.jobClaim({ workerId: 'w1', limit: 200, queues: ['default'], leaseMs: 30_000 })).toHaveLength(200);
    expect(await store.statistics).toBe(true);
    expect(await stats()).toBe(1);
    // Beside the claim, two statements of the guard's own: the look at pg_stats, and the ANALYZE.
    expect(texts.map((text) => (text.includes('WITH paused AS') ? 'claim' : text.includes('pg_stats') ? 'look' : text.trim().split(/\s+/)[0]))).toEqual(['claim', 'look', 'ANALYZE']);
    const claim = texts.find((text) => text.includes('WITH paused AS'))!;
    const scans = (await claimScans(claim, store.naming.jobs, 200)).map((scan) => `${scan.type}${scan.index ? ` ${scan.index}` : ''}`);
    expect(scans).toContain('Index Scan jobs_claim_idx');
    expect(scans.filter((scan) => scan.startsWith('Bitmap'))).toEqual([]);
    // The table has statistics now: the guard sends nothing more.
    texts.length = 0;
    expect(await store.jobClaim({ workerId: 'w1', limit: 200, queues: ['default'], leaseMs: 30_000 })).toHaveLength(200);
    expect(await store.statistics).toBe(false);
    expect(texts.filter((text) => !text.includes('WITH paused AS'))).toEqual([]);
  });

  it('leases the jobs it picked through the primary key, never by scanning every job, on a small analyzed table', async () => {
    const texts: string[] = [];
    const store = freshStore({ onStatement: (text) => texts.push(text) });
    await store.migrate();
    for (let i = 0; i < 3; i++) await store.jobEnqueueMany({ jobs: Array.from({ length: 1_000 }, (_, j) => ({ name: 'plan', payload: { k: i * 1_000 + j, pad: 'x'.repeat(80) } })) });
    await dataSource.query(`ANALYZE ${store.naming.jobs}`);
    expect(await store.jobClaim({ workerId: 'w1', limit: 200, queues: ['default'], leaseMs: 30_000 })).toHaveLength(200);
    const claim = texts.find((text) => text.includes('WITH paused AS'));
    expect(claim).toBeDefined();
    const scans = (await claimScans(claim!, store.naming.jobs, 200)).map((scan) => `${scan.type}${scan.index ? ` ${scan.index}` : ''}`);
    // Joined to the picked rows, the planner hashed a scan of the whole table on every claim
    // whenever it judged the table small: twice the claim's time at a few thousand jobs.
    expect(scans.filter((scan) => scan.startsWith('Seq Scan'))).toEqual([]);
    expect(scans).toContain('Index Scan jobs_pkey');
  });
});
