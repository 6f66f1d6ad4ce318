import { describe, expect, it } from '@jest/globals';
import pg from 'pg';
import type { PostgresJobStore } from '../../lib/store/index.js';
import { databaseUrl, openPostgresDataSource } from '../support/postgres.js';
import { dataSource, freshStore, useAdapterDataSource } from '../support/postgres-adapter.js';
import { nodes, type PlanNode } from '../support/postgres-plans.js';

useAdapterDataSource();

const LEASE = 3_600_000;

/** A store whose key 'hot' is capped at 1 with one job running, `held` more of its jobs (urgent) and `normal` jobs behind. */
async function hotBacklog(store: PostgresJobStore, held: number, normal: number) {
  await store.migrate();
  await store.concurrencyLimitSet({ target: { key: 'hot' }, max: 1 });
  const jobs = (n: number, extra: object) => Array.from({ length: n }, (_, i) => ({ name: 'held', payload: i, ...extra }));
  await store.jobEnqueueMany({ jobs: jobs(1, { concurrencyKey: 'hot', priority: -10 }) });
  expect(await store.jobClaim({ workerId: 'runner', limit: 1, queues: ['default'], leaseMs: LEASE })).toHaveLength(1);
  for (let at = 0; at < held; at += 2_000) await store.jobEnqueueMany({ jobs: jobs(Math.min(2_000, held - at), { concurrencyKey: 'hot', priority: -10 }) });
  await store.jobEnqueueMany({ jobs: jobs(normal, {}) });
}

describe('PostgreSQL claims past held-back jobs', () => {
  it('issue 35 item 1: once a held-back backlog is parked, a claim reads a few job rows beside it, not the backlog', async () => {
    const texts: string[] = [];
    const store = freshStore({ onStatement: (text) => texts.push(text) });
    await hotBacklog(store, 5_000, 100);
    // The first claim parks the backlog in its lane (a few rounds of widening windows).
    expect(await store.jobClaim({ workerId: 'w', limit: 8, queues: ['default'], leaseMs: LEASE })).toHaveLength(8);
    // The limited claim's statement, as the store sent it (it reads a window, $5, in its first round).
    const claim = texts.filter((text) => text.includes('wanted AS')).at(-1)!;
    // It takes its turn from the lane and the group in $6 to $8: here none.
    const values = claim.includes('$5') ? ['w2', 8, 60_000, true, 8, null, null, null] : ['w2', 8, 60_000, true];
    const client = new pg.Client({ connectionString: databaseUrl() });
    await client.connect();
    try {
      await client.query('BEGIN');
      await client.query("SELECT set_config('jit', 'off', true)");
      const { rows } = await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${claim}`, values);
      await client.query('ROLLBACK');
      const plan = (rows[0]['QUERY PLAN'] as Array<{ Plan: PlanNode }>)[0]!.Plan;
      const reads = nodes(plan).filter((node) => node['Relation Name'] === 'jobs' && node['Node Type'] !== 'ModifyTable');
      // Every row any scan of the jobs table returned or filtered out, over all its loops.
      const touched = reads.reduce((sum, node) => sum + Number(node['Actual Rows']) * Number(node['Actual Loops']) + Number(node['Rows Removed by Filter'] ?? 0), 0);
      expect(touched).toBeLessThan(100);
      expect(nodes(plan).find((node) => node['Node Type'] === 'ModifyTable' && node['Relation Name'] === 'jobs' && Number(node['Actual Rows']) === 8)).toBeDefined();
    } finally {
      await client.end();
    }
  });

  it('issue 35 item 1: six claimers racing past a hot key park and take every job once, never more of the key than its cap', async () => {
    const store = freshStore();
    await store.migrate();
    await store.concurrencyLimitSet({ target: { key: 'hot' }, max: 2 });
    const jobs = (n: number, extra: object) => Array.from({ length: n }, (_, i) => ({ name: 'held', payload: i, ...extra }));
    await store.jobEnqueueMany({ jobs: jobs(300, { concurrencyKey: 'hot', priority: -10 }) });
    await store.jobEnqueueMany({ jobs: jobs(300, {}) });
    const schema = store.naming.schema;
    const sources = await Promise.all(Array.from({ length: 6 }, () => openPostgresDataSource(2)));
    let mostHot = 0;
    let claimsBesideHeld = 0;
    try {
      const { PostgresJobStore } = await import('../../lib/store/index.js');
      await Promise.all(
        sources.map(async (source, index) => {
          const claimer = new PostgresJobStore({ dataSource: source, schema });
          try {
            for (;;) {
              const taken = await claimer.jobClaim({ workerId: `c${index}`, limit: 4, queues: ['default'], leaseMs: LEASE });
              // What runs under the key now, as the database sees it, after this claim committed.
              const [{ hot, parked }] = await source.query(
                `SELECT count(*) FILTER (WHERE state = 'running')::int AS hot, count(*) FILTER (WHERE parked_key IS NOT NULL)::int AS parked
                   FROM "${schema}".jobs WHERE concurrency_key = 'hot'`,
              );
              mostHot = Math.max(mostHot, hot);
              if (parked > 0) claimsBesideHeld += 1;
              if (taken.length === 0) {
                const [{ n }] = await source.query(`SELECT count(*)::int AS n FROM "${schema}".jobs WHERE state <> 'succeeded'`);
                if (n === 0) return;
                continue;
              }
              await claimer.jobCompleteMany({ workerId: `c${index}`, outcomes: taken.map((job) => ({ jobId: job.id, attempt: job.attempt, kind: 'succeeded' as const })) });
            }
          } finally {
            await claimer.close();
          }
        }),
      );
    } finally {
      await Promise.all(sources.map((source) => source.destroy()));
    }
    // The cap held while the backlog was parked and taken back from its lane, and the race happened.
    expect(mostHot).toBe(2);
    expect(claimsBesideHeld).toBeGreaterThan(0);
    // Every job ran exactly once (one attempt each), and nothing is left parked.
    const states = await dataSource.query(`SELECT state, count(*)::int AS n, max(attempt)::int AS attempts, count(parked_key)::int AS parked FROM "${schema}".jobs GROUP BY 1`);
    expect(states).toEqual([{ state: 'succeeded', n: 600, attempts: 1, parked: 0 }]);
  });
});
