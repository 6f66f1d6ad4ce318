import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource, type EntityManager } from 'typeorm';
import { LATEST_SCHEMA_VERSION, PostgresJobStore, type JobStateCount } from '../../lib/store/index.js';
import { limitsLockId } from '../../lib/store/postgres/postgres-limits.js';
import { gate, tracked, untilWaiting } from '../support/lock-waits.js';
import { databaseUrl, dropSchemas, openPostgresDataSource, uniqueSchema } from '../support/postgres.js';

const LEASE_MS = 60_000;

/**
 * The kept job counts against concurrent writers on PostgreSQL. Each test holds one side of an
 * interleaving open with a lock, checks every read against a count of the jobs table made at the
 * same moment, and checks again once everything has committed and been folded.
 */
describe('PostgreSQL job counts stay exact while folds, claims and outcome writes interleave', () => {
  let dataSource: DataSource;
  let admin: DataSource;
  const schemas: string[] = [];

  beforeAll(async () => {
    dataSource = await openPostgresDataSource(8);
    admin = await openPostgresDataSource(2);
  });

  afterAll(async () => {
    await dropSchemas(admin, schemas);
    await admin.destroy();
    await dataSource.destroy();
  });

  async function openStore(): Promise<PostgresJobStore> {
    const schema = uniqueSchema('counts');
    schemas.push(schema);
    const store = new PostgresJobStore({ dataSource, schema });
    await store.migrate();
    return store;
  }

  /** What the committed rows say, counted from the jobs table itself. */
  const truth = async (store: PostgresJobStore): Promise<JobStateCount[]> =>
    admin.query(`SELECT queue, state, count(*)::int AS count FROM ${store.naming.jobs} GROUP BY queue, state ORDER BY queue, state`);

  /** jobStats and queueList agree with the rows. */
  async function expectExact(store: PostgresJobStore): Promise<void> {
    const counted = await truth(store);
    expect((await store.jobStats()).counts).toEqual(counted);
    const listed = (await store.queueList()).flatMap((q) => Object.entries(q.counts).map(([state, count]) => ({ queue: q.name, state, count })));
    expect(listed.sort((a, b) => `${a.queue} ${a.state}`.localeCompare(`${b.queue} ${b.state}`))).toEqual(counted);
  }

  async function foldAll(store: PostgresJobStore): Promise<void> {
    while ((await store.jobCountsFold({ limit: 100_000 })) > 0);
  }

  const pendingRows = async (store: PostgresJobStore): Promise<number> => Number((await admin.query(`SELECT count(*) AS n FROM ${store.naming.countDeltas}`))[0].n);

  it('a fold held between its delete and its upsert: writers commit, reads stay exact without waiting, and the fold then lands', async () => {
    const store = await openStore();
    await store.jobEnqueueMany({ jobs: Array.from({ length: 20 }, (_, i) => ({ name: 'job', payload: i, queue: 'q' })) });
    await foldAll(store);
    expect(await store.jobClaim({ workerId: 'w', limit: 5, queues: ['q'], leaseMs: LEASE_MS })).toHaveLength(5);
    expect(await pendingRows(store)).toBe(2); // (q, scheduled) -5 and (q, running) +5

    const holder = dataSource.createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    try {
      await holder.query(`SELECT 1 FROM ${store.naming.counts} WHERE queue = 'q' AND state = 'scheduled' FOR UPDATE`);
      const fold = tracked(store.jobCountsFold({ limit: 1_000 }));
      expect(await untilWaiting(admin, 'pg_try_advisory_xact_lock', fold.isDone)).toBe(true);

      // The fold has deleted both change rows and waits to add them. Claims, outcomes and
      // enqueues go on; another fold finds the fold lock taken and moves nothing; every read
      // sums what it sees in one snapshot (the waiting fold's deletes are not committed).
      const claimed = await store.jobClaim({ workerId: 'w', limit: 4, queues: ['q'], leaseMs: LEASE_MS });
      await store.jobCompleteMany({
        workerId: 'w',
        outcomes: claimed.map((job, i) => (i % 2 === 0 ? { jobId: job.id, attempt: 1, kind: 'succeeded' as const } : { jobId: job.id, attempt: 1, kind: 'dead_lettered' as const, error: 'x' })),
      });
      await store.jobEnqueue({ job: { name: 'job', payload: 'late', queue: 'other' } });
      expect(await store.jobCountsFold({ limit: 1_000 })).toBe(0);
      await expectExact(store);
      expect(fold.isDone()).toBe(false);

      await holder.rollbackTransaction();
      expect(await fold.promise).toBe(2);
    } finally {
      if (holder.isTransactionActive) await holder.rollbackTransaction();
      await holder.release();
    }
    await expectExact(store);
    await foldAll(store);
    expect(await pendingRows(store)).toBe(0);
    await expectExact(store);
    expect(await truth(store)).toEqual([
      { queue: 'other', state: 'scheduled', count: 1 },
      { queue: 'q', state: 'dead_lettered', count: 2 },
      { queue: 'q', state: 'running', count: 5 },
      { queue: 'q', state: 'scheduled', count: 11 },
      { queue: 'q', state: 'succeeded', count: 2 },
    ]);
  });

  it('changes not yet committed while folds run (an outcome write held inside its effects, an enqueue in an open host transaction) are counted once they commit', async () => {
    const store = await openStore();
    await store.jobEnqueueMany({ jobs: Array.from({ length: 6 }, (_, i) => ({ name: 'job', payload: i })) });
    const claimed = await store.jobClaim({ workerId: 'w', limit: 3, queues: ['default'], leaseMs: LEASE_MS });
    await foldAll(store);

    // The limits lock, held exclusively, stops the outcome write in its effects trigger (releasing
    // slots takes that lock shared), after its counting trigger appended its changes.
    const limits = dataSource.createQueryRunner();
    await limits.connect();
    await limits.startTransaction();
    const hold = gate();
    const inserted = gate();
    let host: Promise<void> | undefined;
    try {
      await limits.query(`SELECT pg_advisory_xact_lock(${limitsLockId(store.naming)})`);
      const outcome = tracked(store.jobCompleteMany({ workerId: 'w', outcomes: claimed.map((job) => ({ jobId: job.id, attempt: 1, kind: 'succeeded' as const })) }));
      expect(await untilWaiting(admin, 'AS r(id, attempt, kind', outcome.isDone)).toBe(true);
      const appended = await admin.query(
        `SELECT 1 FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
         WHERE l.relation = $1::regclass AND l.mode = 'RowExclusiveLock' AND position('AS r(id, attempt, kind' in a.query) > 0`,
        [store.naming.countDeltas],
      );
      expect(appended).toHaveLength(1);
      host = dataSource.transaction(async (manager: EntityManager) => {
        await store.jobEnqueueMany({ jobs: [1, 2].map((n) => ({ name: 'host', payload: n, queue: 'host' })), manager });
        inserted.open();
        await hold.opened;
      });
      await inserted.opened;

      // Neither is visible to a fold or a read: the counts are those of the committed rows.
      expect(await store.jobCountsFold({ limit: 1_000 })).toBe(0);
      await expectExact(store);
      expect(await truth(store)).toEqual([
        { queue: 'default', state: 'running', count: 3 },
        { queue: 'default', state: 'scheduled', count: 3 },
      ]);

      hold.open();
      await host;
      await limits.commitTransaction();
      expect((await outcome.promise).every((r) => r.status === 'applied')).toBe(true);
    } finally {
      hold.open();
      await host?.catch(() => undefined);
      if (limits.isTransactionActive) await limits.rollbackTransaction();
      await limits.release();
    }
    // The outcome's two change rows and the enqueue's one wait for a fold; reads are exact meanwhile.
    expect(await pendingRows(store)).toBe(3);
    expect(await store.jobCountsFold({ limit: 1 })).toBe(1);
    expect(await pendingRows(store)).toBe(2);
    await expectExact(store);
    await foldAll(store);
    await expectExact(store);
    expect(await truth(store)).toEqual([
      { queue: 'default', state: 'scheduled', count: 3 },
      { queue: 'default', state: 'succeeded', count: 3 },
      { queue: 'host', state: 'scheduled', count: 2 },
    ]);
  });

  it('follows deletes made outside the store, and a TRUNCATE of the jobs table', async () => {
    const store = await openStore();
    await store.jobEnqueueMany({ jobs: Array.from({ length: 8 }, (_, i) => ({ name: 'job', payload: i, queue: i % 2 ? 'a' : 'b' })) });
    await foldAll(store);
    await admin.query(`DELETE FROM ${store.naming.jobs} WHERE queue = 'a'`);
    await expectExact(store);
    expect((await store.jobStats()).counts).toEqual([{ queue: 'b', state: 'scheduled', count: 4 }]);
    await admin.query(`TRUNCATE ${store.naming.jobs}`);
    expect(await pendingRows(store)).toBe(0);
    expect((await store.jobStats()).counts).toEqual([]);
    expect(await store.queueList()).toEqual([]);
    await store.jobEnqueue({ job: { name: 'job', payload: 'after', queue: 'c' } });
    await expectExact(store);
  });

  it('a count read on a read-only connection (a standby) reads without folding', async () => {
    const store = await openStore();
    await store.jobEnqueueMany({ jobs: Array.from({ length: 3 }, (_, i) => ({ name: 'job', payload: i })) });
    const readOnly = await new DataSource({ type: 'postgres', url: databaseUrl(), extra: { max: 1, options: '-c default_transaction_read_only=on' } }).initialize();
    try {
      const reader = new PostgresJobStore({ dataSource: readOnly, schema: store.naming.schema });
      expect((await reader.jobStats()).counts).toEqual([{ queue: 'default', state: 'scheduled', count: 3 }]);
      expect((await reader.queueList()).map((q) => q.counts)).toEqual([{ scheduled: 3 }]);
      expect(await pendingRows(store)).toBe(1);
      await expect(reader.jobCountsFold({ limit: 10 })).rejects.toThrow(/read-only transaction/);
      await reader.close();
    } finally {
      await readOnly.destroy();
    }
  });

  it('migration 12 seeds the counts from the jobs already stored, and keeps them from then on', async () => {
    const store = await openStore();
    await store.jobEnqueueMany({ jobs: Array.from({ length: 7 }, (_, i) => ({ name: 'job', payload: i, queue: i < 4 ? 'a' : 'b' })) });
    await store.jobClaim({ workerId: 'w', limit: 2, queues: ['a'], leaseMs: LEASE_MS });
    // Back to version 9's schema: no index, no count tables, no counting triggers.
    const { naming } = store;
    for (const event of ['insert', 'update', 'delete', 'truncate']) await admin.query(`DROP TRIGGER jobs_count_${event} ON ${naming.jobs}`);
    await admin.query(`DROP FUNCTION "${naming.schema}".jobs_count_changes()`);
    await admin.query(`DROP TABLE ${naming.counts}, ${naming.countDeltas}`);
    await admin.query(`DROP INDEX "${naming.schema}".jobs_state_seq_idx`);
    await admin.query(`DELETE FROM ${naming.migrations} WHERE version = 12`);
    await store.jobEnqueue({ job: { name: 'job', payload: 'before the upgrade', queue: 'b' } });

    const upgraded = new PostgresJobStore({ dataSource, schema: naming.schema });
    await upgraded.migrate();
    expect(await upgraded.schemaVersion()).toBe(LATEST_SCHEMA_VERSION);
    expect(await pendingRows(upgraded)).toBe(0);
    expect((await upgraded.jobStats()).counts).toEqual([
      { queue: 'a', state: 'running', count: 2 },
      { queue: 'a', state: 'scheduled', count: 2 },
      { queue: 'b', state: 'scheduled', count: 4 },
    ]);
    await upgraded.jobClaim({ workerId: 'w', limit: 4, queues: ['b'], leaseMs: LEASE_MS });
    await expectExact(upgraded);
    await upgraded.close();
  });
});
