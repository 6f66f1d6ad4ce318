import { describe, expect, it } from '@jest/globals';
import type { EntityManager } from 'typeorm';
import { PostgresJobStore } from '../../lib/store/index.js';
import { gate, tracked, untilWaiting } from '../support/lock-waits.js';
import { raceStores } from '../support/race-stores.js';

const LEASE_MS = 60_000;

describe('issue 19 item 4: a dependant and its parent\'s outcome write serialize on PostgreSQL', () => {
  const race = raceStores('deprace');
  const openStore = (finish: 'keep' | 'lean' = 'keep') => race.open({ finish });

  async function runningParent(store: PostgresJobStore, workerId = 'w') {
    const { id } = await store.jobEnqueue({ job: { name: 'parent', payload: {} } });
    const [job] = await store.jobClaim({ workerId, limit: 1, queues: ['default'], leaseMs: LEASE_MS });
    expect(job!.id).toBe(id);
    return id;
  }

  it('an outcome write in flight when the dependant is enqueued: the enqueue waits for it and starts the dependant released', async () => {
    const store = await openStore();
    const parent = await runningParent(store);
    const holder = race.dataSource.createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    try {
      // The parent's success, written and not yet committed (its settling already ran, seeing no
      // dependant), its row locked first as every write that ends a job locks it.
      await holder.query(`SELECT 1 FROM ${store.naming.jobs} WHERE id = $1 FOR UPDATE`, [parent]);
      await holder.query(`UPDATE ${store.naming.jobs} SET state = 'succeeded', leased_until = NULL, finished_at = now() WHERE id = $1`, [parent]);
      const enqueue = tracked(store.jobEnqueue({ job: { name: 'child', payload: {}, dependsOn: [parent] } }));
      expect(await untilWaiting(race.admin, 'FOR KEY SHARE', enqueue.isDone)).toBe(true);
      await holder.commitTransaction();
      const { id } = await enqueue.promise;
      expect(await store.jobGet({ jobId: id })).toMatchObject({ state: 'scheduled', pendingParents: 0 });
      expect(await race.dataSource.query(`SELECT settled FROM ${store.naming.dependencies} WHERE child_id = $1`, [id])).toEqual([{ settled: true }]);
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
    const host = race.dataSource.transaction(async (manager: EntityManager) => {
      child = (await store.jobEnqueue({ job: { name: 'child', payload: {}, dependsOn: [parent] }, manager })).id;
      inserted.open();
      await hold.opened;
    });
    await inserted.opened;
    const outcome = tracked(store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: parent, attempt: 1, kind: 'succeeded' }] }));
    const waited = await untilWaiting(race.admin, 'WITH ending AS', outcome.isDone);
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
    const host = race.dataSource.transaction(async (manager: EntityManager) => {
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
      race.dataSource.query(
        `WITH ending AS MATERIALIZED (SELECT id FROM ${store.naming.jobs} WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE)
         UPDATE ${store.naming.jobs} SET state = 'succeeded', leased_until = NULL, finished_at = now()
         WHERE (SELECT count(*) FROM ending) >= 0 AND id = ANY($1::uuid[]) AND state = 'running'`,
        [[p1, p2]],
      ),
    );
    expect(await untilWaiting(race.admin, 'WITH ending AS', outcome.isDone)).toBe(true);
    hold.open();
    await host;
    await outcome.promise;
    expect(await store.jobGet({ jobId: p1 })).toMatchObject({ state: 'succeeded' });
    expect(await store.jobGet({ jobId: p2 })).toMatchObject({ state: 'succeeded' });
    for (const id of children) expect(await store.jobGet({ jobId: id })).toMatchObject({ state: 'scheduled', pendingParents: 0 });
  });

  it('never deadlocks: one parent\'s failure cancels the dependants another parent\'s success is releasing, both held up on a shared dependant', async () => {
    const store = await openStore();
    const failing = await runningParent(store);
    const succeeding = await runningParent(store);
    const children: string[] = [];
    for (let i = 0; i < 20; i++) children.push((await store.jobEnqueue({ job: { name: 'child', payload: i, dependsOn: [failing, succeeding] } })).id);
    children.sort();
    // The two lowest rewritten, so their newest versions lie last in the table: a settler that
    // wrote dependants in the order it reads the table would take the others first.
    await race.dataSource.query(`UPDATE ${store.naming.jobs} SET updated_at = updated_at WHERE id = ANY($1::uuid[])`, [children.slice(0, 2)]);
    const holder = race.dataSource.createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    try {
      // The second-lowest dependant held elsewhere: the failure's settling locks the lowest, then
      // waits here. The success's settling, started next, must wait at the lowest holding nothing of
      // the others; a settler that wrote dependants in any other order would hold some the failure
      // needs once the holder lets go, and one of the two would die in a deadlock.
      await holder.query(`SELECT 1 FROM ${store.naming.jobs} WHERE id = $1 FOR UPDATE`, [children[1]]);
      const failure = tracked(store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: failing, attempt: 1, kind: 'dead_lettered', error: 'broken' }] }));
      expect(await untilWaiting(race.admin, 'WITH ending AS', failure.isDone)).toBe(true);
      const success = tracked(store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: succeeding, attempt: 1, kind: 'succeeded' }] }));
      expect(await untilWaiting(race.admin, 'WITH ending AS', () => failure.isDone() || success.isDone(), 2)).toBe(true);
      await holder.commitTransaction();
      expect(await failure.promise).toMatchObject([{ status: 'applied' }]);
      expect(await success.promise).toMatchObject([{ status: 'applied' }]);
    } finally {
      if (holder.isTransactionActive) await holder.rollbackTransaction();
      await holder.release();
    }
    for (const id of children) expect(await store.jobGet({ jobId: id })).toMatchObject({ state: 'cancelled', lastError: `parent ${failing} ended dead_lettered` });
  });

  it('never deadlocks: an operator cancels a dependant while its parent\'s failure cancels it and a dependant of both', async () => {
    const store = await openStore();
    const parent = await runningParent(store);
    const { id: middle } = await store.jobEnqueue({ job: { name: 'middle', payload: {}, dependsOn: [parent] } });
    const { id: last } = await store.jobEnqueue({ job: { name: 'last', payload: {}, dependsOn: [parent, middle] } });
    expect(middle < last).toBe(true);
    const operator = race.dataSource.createQueryRunner();
    await operator.connect();
    await operator.startTransaction();
    try {
      // The operator's cancel locks its job first, as every write that ends a job does.
      await operator.query(`SELECT 1 FROM ${store.naming.jobs} WHERE id = $1 FOR UPDATE`, [middle]);
      const failure = tracked(store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: parent, attempt: 1, kind: 'dead_lettered', error: 'broken' }] }));
      expect(await untilWaiting(race.admin, 'WITH ending AS', failure.isDone)).toBe(true);
      // Its cancel settles the edge to the last job, which the failure also cancels: the failure
      // must be waiting at the middle job holding nothing, not holding the last one.
      await operator.query(`UPDATE ${store.naming.jobs} SET state = 'cancelled', finished_at = now() WHERE id = $1`, [middle]);
      await operator.commitTransaction();
      expect(await failure.promise).toMatchObject([{ status: 'applied', state: 'dead_lettered' }]);
    } finally {
      if (operator.isTransactionActive) await operator.rollbackTransaction();
      await operator.release();
    }
    expect(await store.jobGet({ jobId: last })).toMatchObject({ state: 'cancelled' });
  });

  it.each(['dead_lettered', 'succeeded'] as const)('a dependant created after its parent\'s outcome write began is dated no earlier than its creation and its parent\'s end (%s)', async (ending) => {
    const store = await openStore();
    const parent = await runningParent(store);
    const writer = race.dataSource.createQueryRunner();
    await writer.connect();
    try {
      // The outcome write's transaction begins first, as an attempt transaction does (and as a
      // statement does, by its parse time, before the execution that waits for an enqueue's lock).
      await writer.startTransaction();
      await writer.query('SELECT now()');
      const { id: child } = await store.jobEnqueue({ job: { name: 'child', payload: {}, dependsOn: [parent] } });
      await writer.query(`SELECT 1 FROM ${store.naming.jobs} WHERE id = $1 FOR UPDATE`, [parent]);
      await writer.query(`UPDATE ${store.naming.jobs} SET state = $2, leased_until = NULL, finished_at = statement_timestamp() WHERE id = $1`, [parent, ending]);
      await writer.commitTransaction();
      const [dates] = await race.dataSource.query(
        `SELECT c.state, c.updated_at >= c.created_at AS updated_after_created, c.updated_at >= p.finished_at AS updated_after_parent,
           c.finished_at IS NULL OR (c.finished_at >= c.created_at AND c.finished_at >= p.finished_at) AS finished_in_order
         FROM ${store.naming.jobs} c, ${store.naming.jobs} p WHERE c.id = $1 AND p.id = $2`,
        [child, parent],
      );
      expect(dates).toEqual({ state: ending === 'succeeded' ? 'scheduled' : 'cancelled', updated_after_created: true, updated_after_parent: true, finished_in_order: true });
    } finally {
      if (writer.isTransactionActive) await writer.rollbackTransaction();
      await writer.release();
    }
  });

  it('a dependant whose enqueue commits while its parent\'s outcome statement waits is dated no earlier than its creation', async () => {
    const store = await openStore();
    const parent = await runningParent(store);
    const holder = race.dataSource.createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    const hold = gate();
    const inserted = gate();
    let child = '';
    try {
      // A heartbeat-strength lock on the parent holds the outcome statement up after it started;
      // the dependant's enqueue takes its key-share lock beside it, so it is created after the
      // statement began and commits before the statement settles it.
      await holder.query(`SELECT 1 FROM ${store.naming.jobs} WHERE id = $1 FOR NO KEY UPDATE`, [parent]);
      const outcome = tracked(store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: parent, attempt: 1, kind: 'dead_lettered', error: 'broken' }] }));
      expect(await untilWaiting(race.admin, 'WITH ending AS', outcome.isDone)).toBe(true);
      const host = race.dataSource.transaction(async (manager: EntityManager) => {
        child = (await store.jobEnqueue({ job: { name: 'child', payload: {}, dependsOn: [parent] }, manager })).id;
        inserted.open();
        await hold.opened;
      });
      await inserted.opened;
      await holder.commitTransaction();
      expect(await untilWaiting(race.admin, 'WITH ending AS', outcome.isDone)).toBe(true);
      hold.open();
      await host;
      expect(await outcome.promise).toMatchObject([{ status: 'applied', state: 'dead_lettered' }]);
    } finally {
      hold.open();
      if (holder.isTransactionActive) await holder.rollbackTransaction();
      await holder.release();
    }
    const [dates] = await race.dataSource.query(
      `SELECT c.state, c.finished_at >= c.created_at AS finished_after_created, c.updated_at >= c.created_at AS updated_after_created
       FROM ${store.naming.jobs} c WHERE c.id = $1`,
      [child],
    );
    expect(dates).toEqual({ state: 'cancelled', finished_after_created: true, updated_after_created: true });
  });

  it('a due parent that a dependant\'s enqueue holds is still claimed at once', async () => {
    const store = await openStore();
    const { id: parent } = await store.jobEnqueue({ job: { name: 'parent', payload: {}, queue: 'deps' } });
    const hold = gate();
    const inserted = gate();
    const host = race.dataSource.transaction(async (manager: EntityManager) => {
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
