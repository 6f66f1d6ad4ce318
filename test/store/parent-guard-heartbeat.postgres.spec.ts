import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource, type EntityManager } from 'typeorm';
import { PostgresJobStore } from '../../lib/store/index.js';
import { gate, tracked, untilWaiting } from '../support/lock-waits.js';
import { databaseUrl, dropSchemas, openPostgresDataSource, uniqueSchema } from '../support/postgres.js';

const LEASE_MS = 60_000;

describe('issue 19 item 4: parent guard does not block the parent\'s heartbeat (PostgreSQL)', () => {
  let dataSource: DataSource;
  let impatient: DataSource;
  let admin: DataSource;
  const schemas: string[] = [];
  const stores: PostgresJobStore[] = [];

  beforeAll(async () => {
    dataSource = await openPostgresDataSource(8);
    admin = await openPostgresDataSource(1);
    // A second pool whose every statement gives up after 300 ms on a lock: a heartbeat that had to
    // wait for the host transaction fails here instead of passing late.
    impatient = await new DataSource({ type: 'postgres', url: databaseUrl(), extra: { max: 4, options: '-c lock_timeout=300 -c statement_timeout=5000' } }).initialize();
  });

  afterAll(async () => {
    for (const store of stores) await store.close();
    await dropSchemas(admin, schemas);
    await Promise.all([admin.destroy(), impatient.destroy(), dataSource.destroy()]);
  });

  async function openStores() {
    const schema = uniqueSchema('pgguard');
    schemas.push(schema);
    const store = new PostgresJobStore({ dataSource, schema });
    await store.migrate();
    const other = new PostgresJobStore({ dataSource: impatient, schema });
    stores.push(store, other);
    return { store, other };
  }

  async function running(store: PostgresJobStore, count: number) {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) ids.push((await store.jobEnqueue({ job: { name: 'parent', payload: i } })).id);
    const claimed = await store.jobClaim({ workerId: 'w', limit: count, queues: ['default'], leaseMs: LEASE_MS });
    expect(claimed.map((j) => j.id)).toEqual(ids);
    return ids;
  }

  /** A host transaction that enqueues a dependant of `parents` and stays open until `release()`. */
  async function hostHolding(store: PostgresJobStore, parents: string[]) {
    const hold = gate();
    const inserted = gate();
    let child = '';
    const done = dataSource.transaction(async (manager: EntityManager) => {
      child = (await store.jobEnqueue({ job: { name: 'child', payload: {}, dependsOn: parents }, manager })).id;
      inserted.open();
      await hold.opened;
    });
    await inserted.opened;
    return {
      child: () => child,
      commit: async () => {
        hold.open();
        await done;
      },
    };
  }

  it('parent guard does not block the parent\'s heartbeat: a lease held under an open host transaction renews at once, and the dependant is released when the parent succeeds after the commit', async () => {
    const { store, other } = await openStores();
    const [parent, bystander] = await running(store, 2);
    const host = await hostHolding(store, [parent!]);
    try {
      const beat = await other.jobHeartbeat({ workerId: 'w', leases: [{ jobId: parent!, attempt: 1 }, { jobId: bystander!, attempt: 1 }], leaseMs: LEASE_MS });
      expect(beat.renewed.map((r) => r.jobId).sort()).toEqual([parent!, bystander!].sort());
      expect(beat.lost).toEqual([]);
    } finally {
      await host.commit();
    }
    expect(await store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: parent!, attempt: 1, kind: 'succeeded' }] })).toMatchObject([{ status: 'applied' }]);
    expect(await store.jobGet({ jobId: host.child() })).toMatchObject({ state: 'scheduled', pendingParents: 0 });
  });

  it('a retry of a parent held by an open host transaction is written at once, and the parent is still guarded', async () => {
    const { store, other } = await openStores();
    const [parent] = await running(store, 1);
    const host = await hostHolding(store, [parent!]);
    try {
      expect(await other.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: parent!, attempt: 1, kind: 'failed', error: 'boom', retryDelayMs: 0 }] })).toMatchObject([
        { status: 'applied', state: 'scheduled' },
      ]);
    } finally {
      await host.commit();
    }
    expect(await store.jobGet({ jobId: host.child() })).toMatchObject({ state: 'awaiting_parents', pendingParents: 1 });
  });

  it('concurrent success inside a host transaction: the outcome batch waits for the commit, heartbeats of its worker never wait meanwhile, and the dependant is released at once', async () => {
    const { store, other } = await openStores();
    // UUIDv7 ids grow with time: `first` < `parent`, so the batch locks `first` and then waits for `parent`.
    const [first, parent, bystander] = await running(store, 3);
    const host = await hostHolding(store, [parent!]);
    const outcome = tracked(
      store.jobCompleteMany({
        workerId: 'w',
        outcomes: [
          { jobId: first!, attempt: 1, kind: 'succeeded' },
          { jobId: parent!, attempt: 1, kind: 'succeeded' },
        ],
      }),
    );
    try {
      expect(await untilWaiting(admin, 'WITH ending AS', outcome.isDone)).toBe(true);
      const leases = [first!, parent!, bystander!].map((jobId) => ({ jobId, attempt: 1 }));
      const beat = await other.jobHeartbeat({ workerId: 'w', leases, leaseMs: LEASE_MS });
      // The row the waiting batch has locked is passed by, neither renewed nor lost; the rest renew.
      expect(beat.lost).toEqual([]);
      expect(beat.renewed.map((r) => r.jobId)).toContain(bystander!);
      expect(beat.renewed.map((r) => r.jobId)).not.toContain(first!);
      expect(outcome.isDone()).toBe(false);
    } finally {
      await host.commit();
    }
    expect(await outcome.promise).toMatchObject([{ status: 'applied' }, { status: 'applied' }]);
    expect(await store.jobGet({ jobId: host.child() })).toMatchObject({ state: 'scheduled', pendingParents: 0 });
  });

  it('concurrent success in autocommit: an enqueue that meets the parent\'s outcome write in flight waits for it and starts the dependant released', async () => {
    const { store } = await openStores();
    const [parent] = await running(store, 1);
    // The parent's success, written as the outcome write writes it (its row locked first), not yet committed.
    const attempt = dataSource.createQueryRunner();
    await attempt.connect();
    await attempt.startTransaction();
    try {
      await attempt.query(
        `WITH ending AS MATERIALIZED (SELECT id FROM ${store.naming.jobs} WHERE id = $1 FOR UPDATE)
         UPDATE ${store.naming.jobs} SET state = 'succeeded', leased_until = NULL, finished_at = now() WHERE (SELECT count(*) FROM ending) >= 0 AND id = $1`,
        [parent],
      );
      const enqueue = tracked(store.jobEnqueue({ job: { name: 'child', payload: {}, dependsOn: [parent!] } }));
      expect(await untilWaiting(admin, 'FOR KEY SHARE', enqueue.isDone)).toBe(true);
      await attempt.commitTransaction();
      const { id } = await enqueue.promise;
      expect(await store.jobGet({ jobId: id })).toMatchObject({ state: 'scheduled', pendingParents: 0 });
    } finally {
      if (attempt.isTransactionActive) await attempt.rollbackTransaction();
      await attempt.release();
    }
  });
});
