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

/**
 * Runs the last limited claim `texts` holds again, for worker 'w2' and a batch of `limit`, under
 * EXPLAIN ANALYZE in a transaction rolled back: every row any scan of the jobs table returned or
 * filtered out, over all its loops, and how many rows each of its writes to the jobs table wrote
 * (the lease is one of them). With `generic`, the plan is the generic one a prepared statement
 * keeps once its first executions are done, planned on the statistics of that moment.
 */
async function claimReads(texts: readonly string[], limit: number, generic = false): Promise<{ touched: number; written: number[] }> {
  // The limited claim's statement, as the store sent it (it reads a window, $5, in its first round).
  const claim = texts.filter((text) => text.includes('wanted AS')).at(-1)!;
  // It takes its turn from the lane and the group in $6 to $8: here none.
  const values = claim.includes('$5') ? ['w2', limit, 60_000, true, limit, null, null, null] : ['w2', limit, 60_000, true];
  const client = new pg.Client({ connectionString: databaseUrl() });
  await client.connect();
  try {
    await client.query('BEGIN');
    await client.query("SELECT set_config('jit', 'off', true)");
    let rows: Array<Record<string, unknown>>;
    if (generic) {
      await client.query("SELECT set_config('plan_cache_mode', 'force_generic_plan', true)");
      await client.query(`PREPARE held_claim(text, integer, integer, boolean${values.length > 4 ? ', integer, text, text, text' : ''}) AS ${claim}`);
      const literal = (value: unknown) => (value === null ? 'NULL' : typeof value === 'string' ? client.escapeLiteral(value) : String(value));
      ({ rows } = await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE held_claim(${values.map(literal).join(', ')})`));
    } else {
      ({ rows } = await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${claim}`, values));
    }
    await client.query('ROLLBACK');
    const plan = (rows[0]['QUERY PLAN'] as Array<{ Plan: PlanNode }>)[0]!.Plan;
    const reads = nodes(plan).filter((node) => node['Relation Name'] === 'jobs' && node['Node Type'] !== 'ModifyTable');
    const touched = reads.reduce((sum, node) => sum + Number(node['Actual Rows']) * Number(node['Actual Loops']) + Number(node['Rows Removed by Filter'] ?? 0), 0);
    const writes = nodes(plan).filter((node) => node['Node Type'] === 'ModifyTable' && node['Relation Name'] === 'jobs');
    return { touched, written: writes.map((node) => Number(node['Actual Rows'])) };
  } finally {
    await client.end();
  }
}

describe('PostgreSQL claims past held-back jobs', () => {
  it('issue 35 item 1: once a held-back backlog is parked, a claim reads a few job rows beside it, not the backlog', async () => {
    const texts: string[] = [];
    const store = freshStore({ onStatement: (text) => texts.push(text) });
    await hotBacklog(store, 5_000, 100);
    // The first claim parks the backlog in its lane (a few rounds of widening windows).
    expect(await store.jobClaim({ workerId: 'w', limit: 8, queues: ['default'], leaseMs: LEASE })).toHaveLength(8);
    const { touched, written } = await claimReads(texts, 8);
    expect(touched).toBeLessThan(100);
    expect(written).toContain(8);
  });

  it('reads lanes through the lane index under statistics taken before anything was parked: the claim beside 20 parked lanes reads their heads, not their backlogs', async () => {
    const texts: string[] = [];
    const store = freshStore({ onStatement: (text) => texts.push(text) });
    await store.migrate();
    const keys = 20;
    const total = 20_000;
    const schema = store.naming.schema;
    for (let k = 0; k < keys; k += 1) await store.concurrencyLimitSet({ target: { key: `k${k}` }, max: 1 });
    for (let at = 0; at < total; at += 2_000) {
      await store.jobEnqueueMany({ jobs: Array.from({ length: 2_000 }, (_, i) => ({ name: 'capped', payload: at + i, concurrencyKey: `k${(at + i) % keys}` })) });
    }
    // Statistics that say no job is parked, as autovacuum leaves them when a backlog forms after its
    // last analyze; and no autovacuum analyze on this table while the test parks the backlog.
    await dataSource.query(`ALTER TABLE "${schema}".jobs SET (autovacuum_enabled = off)`);
    await dataSource.query(`ANALYZE "${schema}".jobs`);
    // The first claims take one job of each key and park the rest in the keys' lanes (a claim parks
    // at most six widening windows, so a backlog this long takes two).
    const running = [];
    const parked = async () => (await dataSource.query(`SELECT count(*)::int AS n FROM "${schema}".jobs WHERE parked_key IS NOT NULL`))[0].n as number;
    for (let claims = 0; claims < 4 && (await parked()) < total - keys; claims += 1) {
      running.push(...(await store.jobClaim({ workerId: 'w', limit: 200, queues: ['default'], leaseMs: LEASE })));
    }
    expect(running).toHaveLength(keys);
    expect(await parked()).toBe(total - keys);
    await store.jobCompleteMany({ workerId: 'w', outcomes: running.map((job) => ({ jobId: job.id, attempt: job.attempt, kind: 'succeeded' as const })) });
    // Every key has room for one: the claim the store keeps prepared, planned on those statistics,
    // takes the head of each lane and reads little else. Reading lanes through the parked jobs'
    // run-time index instead walks the whole backlog for each lane (about 259,000 rows).
    const { touched, written } = await claimReads(texts, 200, true);
    expect(touched).toBeLessThan(200);
    expect(written).toContain(keys);
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
