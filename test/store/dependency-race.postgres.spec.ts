import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource, EntityManager } from 'typeorm';
import { PostgresJobStore } from '../../lib/store/index.js';
import { gate, tracked, untilWaiting } from '../support/lock-waits.js';
import { dropSchemas, openPostgresDataSource, uniqueSchema } from '../support/postgres.js';

const LEASE_MS = 60_000;

describe('issue 19 item 4: a dependant and its parent\'s outcome write serialize on PostgreSQL', () => {
  let dataSource: DataSource;
  let admin: DataSource;
  const schemas: string[] = [];

  beforeAll(async () => {
    dataSource = await openPostgresDataSource(8);
    admin = await openPostgresDataSource(1);
  });

  afterAll(async () => {
    await dropSchemas(admin, schemas);
    await admin.destroy();
    await dataSource.destroy();
  });

  async function openStore(finish: 'keep' | 'lean' = 'keep') {
    const schema = uniqueSchema('deprace');
    schemas.push(schema);
    const store = new PostgresJobStore({ dataSource, schema, finish });
    await store.migrate();
    return store;
  }

  async function runningParent(store: PostgresJobStore, workerId = 'w') {
    const { id } = await store.jobEnqueue({ job: { name: 'parent', payload: {} } });
    const [job] = await store.jobClaim({ workerId, limit: 1, queues: ['default'], leaseMs: LEASE_MS });
    expect(job!.id).toBe(id);
    return id;
  }

  it('an outcome write in flight when the dependant is enqueued: the enqueue waits for it and starts the dependant released', async () => {
    const store = await openStore();
    const parent = await runningParent(store);
    const holder = dataSource.createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    try {
      // The parent's success, written and not yet committed (its settling already ran, seeing no
      // dependant), its row locked first as every write that ends a job locks it.
      await holder.query(`SELECT 1 FROM ${store.naming.jobs} WHERE id = $1 FOR UPDATE`, [parent]);
      await holder.query(`UPDATE ${store.naming.jobs} SET state = 'succeeded', leased_until = NULL, finished_at = now() WHERE id = $1`, [parent]);
      const enqueue = tracked(store.jobEnqueue({ job: { name: 'child', payload: {}, dependsOn: [parent] } }));
      expect(await untilWaiting(admin, 'FOR KEY SHARE', enqueue.isDone)).toBe(true);
      await holder.commitTransaction();
      const { id } = await enqueue.promise;
      expect(await store.jobGet({ jobId: id })).toMatchObject({ state: 'scheduled', pendingParents: 0 });
      expect(await dataSource.query(`SELECT settled FROM ${store.naming.dependencies} WHERE child_id = $1`, [id])).toEqual([{ settled: true }]);
    } finally {
      if (holder.isTransactionActive) await holder.rollbackTransaction();
      await holder.release();
    }
  });

  /**
   * A dependant enqueued in a transaction still open, then its parent's success: the outcome write
   * must wait for that transaction (checked), and is applied once it commits.
   */
  async function outcomeBehindOpenEnqueue(store: PostgresJobStore) {
    const parent = await runningParent(store);
    const hold = gate();
    const inserted = gate();
    let child = '';
    const host = dataSource.transaction(async (manager: EntityManager) => {
      child = (await store.jobEnqueue({ job: { name: 'child', payload: {}, dependsOn: [parent] }, manager })).id;
      inserted.open();
      await hold.opened;
    });
    await inserted.opened;
    const outcome = tracked(store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: parent, attempt: 1, kind: 'succeeded' }] }));
    const waited = await untilWaiting(admin, 'WITH ending AS', outcome.isDone);
    hold.open();
    await host;
    expect(await outcome.promise).toMatchObject([{ status: 'applied', state: 'succeeded' }]);
    expect(waited).toBe(true);
    return { parent, child };
  }

  it('a dependant enqueued in a transaction still open: the parent\'s outcome write waits for it and then releases the dependant', async () => {
    const store = await openStore();
    const { child } = await outcomeBehindOpenEnqueue(store);
    expect(await store.jobGet({ jobId: child })).toMatchObject({ state: 'scheduled', pendingParents: 0 });
  });

  it('issue 36 item 4: under the lean finish, a parent whose outcome write waited for a dependant\'s enqueue still open is kept, and releases it', async () => {
    const store = await openStore('lean');
    const { parent, child } = await outcomeBehindOpenEnqueue(store);
    // The statement's own snapshot predates the edge; the trigger that decides reads after the wait.
    expect(await store.jobGet({ jobId: parent })).toMatchObject({ state: 'succeeded' });
    expect(await store.jobGet({ jobId: child })).toMatchObject({ state: 'scheduled', pendingParents: 0 });
  });

  it('never deadlocks: a transaction holding one parent enqueues a dependant of two while one outcome batch finishing both waits for it', async () => {
    const store = await openStore();
    // UUIDv7 ids grow with time, so p1 < p2, and the batch below locks p1 before it reaches p2.
    const p1 = await runningParent(store);
    const p2 = await runningParent(store);
    expect(p1 < p2).toBe(true);
    const hold = gate();
    const first = gate();
    const children: string[] = [];
    const host = dataSource.transaction(async (manager: EntityManager) => {
      children.push((await store.jobEnqueue({ job: { name: 'child', payload: 1, dependsOn: [p2] }, manager })).id);
      first.open();
      await hold.opened;
      // The outcome batch holds p1 while it waits for p2, which this transaction holds: waiting for
      // p1 here would close the cycle, so the enqueue must not wait.
      children.push((await store.jobEnqueue({ job: { name: 'child', payload: 2, dependsOn: [p1, p2] }, manager })).id);
    });
    await first.opened;
    // One statement, as every outcome write is: it locks both rows in id order, and its settling
    // runs once both are written.
    const outcome = tracked(
      dataSource.query(
        `WITH ending AS MATERIALIZED (SELECT id FROM ${store.naming.jobs} WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE)
         UPDATE ${store.naming.jobs} SET state = 'succeeded', leased_until = NULL, finished_at = now()
         WHERE (SELECT count(*) FROM ending) >= 0 AND id = ANY($1::uuid[]) AND state = 'running'`,
        [[p1, p2]],
      ),
    );
    expect(await untilWaiting(admin, 'WITH ending AS', outcome.isDone)).toBe(true);
    hold.open();
    await host;
    await outcome.promise;
    expect(await store.jobGet({ jobId: p1 })).toMatchObject({ state: 'succeeded' });
    expect(await store.jobGet({ jobId: p2 })).toMatchObject({ state: 'succeeded' });
    for (const id of children) expect(await store.jobGet({ jobId: id })).toMatchObject({ state: 'scheduled', pendingParents: 0 });
  });

  it('a due parent that a dependant\'s enqueue holds is still claimed at once', async () => {
    const store = await openStore();
    const { id: parent } = await store.jobEnqueue({ job: { name: 'parent', payload: {}, queue: 'deps' } });
    const hold = gate();
    const inserted = gate();
    const host = dataSource.transaction(async (manager: EntityManager) => {
      await store.jobEnqueue({ job: { name: 'child', payload: {}, queue: 'deps', dependsOn: [parent] }, manager });
      inserted.open();
      await hold.opened;
    });
    await inserted.opened;
    try {
      expect((await store.jobClaim({ workerId: 'w', limit: 1, queues: ['deps'], leaseMs: LEASE_MS }))[0]?.id).toBe(parent);
    } finally {
      hold.open();
      await host;
    }
  });
});
