import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import { PostgresJobStore } from '../../lib/store/index.js';
import { limitsLockId } from '../../lib/store/postgres/postgres-limits.js';
import { limitsLockWaiters, until } from '../support/limits-lock.js';
import { databaseUrl, dropSchemas, openPostgresDataSource, uniqueSchema } from '../support/postgres.js';

// Fair groups on PostgreSQL (docs/groups.md): while grouped jobs wait in lanes and no limit exists,
// the claim is the lane claim, one statement that also carries a worker's outcomes; a limit set
// while a lane claim waits for the limits lock is counted by that claim.

const LEASE_MS = 60_000;
let admin: DataSource;
let other: DataSource;
const schemas: string[] = [];
const stores: PostgresJobStore[] = [];
const clients: pg.Client[] = [];

beforeAll(async () => {
  admin = await openPostgresDataSource(6);
  other = await openPostgresDataSource(4);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.end()));
  await Promise.all(stores.map((s) => s.close()));
  await dropSchemas(admin, schemas);
  await Promise.all([admin.destroy(), other.destroy()]);
});

/** A migrated store that records its statements, and a second one on the same schema with a pool of its own (another node). */
async function twoNodes(texts: string[] = []): Promise<[PostgresJobStore, PostgresJobStore]> {
  const schema = uniqueSchema('groups');
  schemas.push(schema);
  const a = new PostgresJobStore({ dataSource: admin, schema, onStatement: (text) => texts.push(text) });
  const b = new PostgresJobStore({ dataSource: other, schema });
  stores.push(a, b);
  await a.migrate();
  return [a, b];
}

const claim = (store: PostgresJobStore, workerId: string, limit: number) => store.jobClaim({ workerId, limit, queues: ['default'], leaseMs: LEASE_MS });

describe('issue 39 item 1: the lane claim on PostgreSQL', () => {
  it('with grouped jobs waiting and no limit, outcomes and the next fair claim go in one statement', async () => {
    const texts: string[] = [];
    const [store] = await twoNodes(texts);
    await store.jobEnqueueMany({ jobs: Array.from({ length: 200 }, (_, i) => ({ name: 'export', payload: i, group: 'big' })) });
    await store.jobEnqueue({ job: { name: 'export', payload: 'small', group: 'small' } });
    // The first claim finds jobs in lanes: the unlimited claim steps aside for the lane claim.
    const first = await claim(store, 'w', 4);
    expect(first.map((job) => job.group).sort()).toEqual(['big', 'big', 'big', 'small']);
    // A full batch starts the statistics guard without waiting for it: let it finish first, so its
    // statements (a read of pg_stats, an ANALYZE) are not counted as the claim's below. CI caught
    // it still looking once.
    await store.statistics;
    texts.length = 0;
    const both = await store.jobCompleteAndClaim({
      workerId: 'w',
      outcomes: first.map((job) => ({ jobId: job.id, attempt: job.attempt, kind: 'succeeded' as const })),
      claim: { limit: 4, queues: ['default'], leaseMs: LEASE_MS },
    });
    expect(both.results.map((result) => result.status)).toEqual(['applied', 'applied', 'applied', 'applied']);
    expect(both.jobs.map((job) => job.group)).toEqual(['big', 'big', 'big', 'big']);
    expect(texts).toHaveLength(1);
    expect(texts[0]).toContain('limits_exist');
  });

  it('a lane claim that waited for the limits lock while a group got its cap counts the cap', async () => {
    const [store, node] = await twoNodes();
    await store.jobEnqueueMany({ jobs: Array.from({ length: 6 }, (_, i) => ({ name: 'export', payload: i, group: 'acme' })) });
    // Both nodes are on the lane claim now, one job of acme running.
    expect(await claim(store, 'w1', 1)).toHaveLength(1);
    const holder = new pg.Client({ connectionString: databaseUrl() });
    await holder.connect();
    clients.push(holder);
    await holder.query(`SELECT pg_advisory_lock(${limitsLockId(store.naming)})`);
    // The cap queues for the lock first, then the claim behind it: once let go, the cap commits
    // before the claim reads anything, though the claim's statement began earlier.
    const change = store.concurrencyLimitSet({ target: { key: 'acme' }, max: 1 });
    await until(async () => (await limitsLockWaiters(admin, store)) === 1, [change]);
    const racing = claim(node, 'w2', 3);
    await until(async () => (await limitsLockWaiters(admin, store)) === 2, [racing]);
    await holder.query(`SELECT pg_advisory_unlock(${limitsLockId(store.naming)})`);
    await change;
    // acme's one slot is taken by the job already running: nothing more starts.
    expect(await racing).toEqual([]);
    expect(await claim(node, 'w3', 3)).toEqual([]);
  });
});
