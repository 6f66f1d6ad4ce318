import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource, QueryRunner } from 'typeorm';
import { SchedulerError, StoreBusyError } from '../../lib/core/index.js';
import { MysqlJobStore } from '../../lib/store/index.js';
import { thrown } from '../bad-input/hostile.js';
import { tracked } from '../support/lock-waits.js';
import { untilLockWait } from '../support/mariadb-lock-waits.js';
import { dropInstallation, heldTransactions, openMariadbDataSource, uniquePrefix } from '../support/mariadb.js';

/*
 * Lost locks reach the caller typed. A transaction of the store's own that the server rolls back
 * to break a deadlock runs again; one on the application's session (an attempt's outcome write,
 * an enqueue in the host's transaction) cannot be run again by the store, so the deadlock (1213)
 * or the lock wait timeout (1205) surfaces as StoreBusyError, never as mysql2's raw error. Every
 * interleaving is forced: another session holds the lock, and the test reads from InnoDB's list
 * of transactions that the store's statement waits on it before it moves on.
 */

const LEASE_MS = 60_000;

let admin: DataSource;
const sources: DataSource[] = [];
const stores: MysqlJobStore[] = [];
const held = heldTransactions();
const scratch = `\`${uniquePrefix('lockf')}scratch\``;

/** A store on tables of its own, on a DataSource of its own (whose sessions the test may change). */
async function openStore(options: { poolSize?: number; onStatement?: (text: string) => void } = {}) {
  const dataSource = await openMariadbDataSource({ poolSize: options.poolSize ?? 2 });
  sources.push(dataSource);
  const store = new MysqlJobStore({ dataSource, tablePrefix: uniquePrefix('lockf'), poolSize: 2, ...(options.onStatement ? { onStatement: options.onStatement } : {}) });
  stores.push(store);
  await store.migrate();
  return { dataSource, store };
}

/** A transaction on `dataSource` that the test drives statement by statement. */
const openTransaction = (dataSource: DataSource): Promise<QueryRunner> => held.open(dataSource);

/**
 * Makes `runner`'s transaction the heavier one, so that InnoDB, which rolls back the transaction
 * that changed the least to break a deadlock, picks the other side.
 */
async function weigh(runner: QueryRunner): Promise<void> {
  await runner.query(`INSERT INTO ${scratch} (id, v) SELECT seq + 100, 'ballast' FROM seq_1_to_300`);
}

async function runningJob(store: MysqlJobStore, queue = 'default') {
  await store.jobEnqueue({ job: { name: 'locked', payload: { queue }, queue } });
  const [job] = await store.jobClaim({ workerId: 'w', limit: 1, queues: [queue], leaseMs: LEASE_MS });
  expect(job).toBeDefined();
  return job!;
}

/** The error mysql2 reported under a typed one. */
const causeOf = (error: Error) => (error as SchedulerError & { cause?: { errno?: number } }).cause;

beforeAll(async () => {
  admin = await openMariadbDataSource({ poolSize: 4 });
  await admin.query(`CREATE TABLE ${scratch} (id INT PRIMARY KEY, v VARCHAR(16) NOT NULL) ENGINE = InnoDB`);
  await admin.query(`INSERT INTO ${scratch} (id, v) VALUES (1, 'before')`);
});

afterAll(async () => {
  await held.release();
  await Promise.all(stores.map((store) => store.close()));
  for (const store of stores) await dropInstallation(admin, store.naming);
  await admin.query(`DROP TABLE IF EXISTS ${scratch}`);
  await Promise.all([...sources, admin].map((source) => source.destroy()));
});

describe('lock failures on MySQL (MariaDB) reach the caller typed', () => {
  it("an attempt's outcome write that waits on a job another session holds past innodb_lock_wait_timeout fails with StoreBusyError, and rolls the handler's writes back", async () => {
    const { store } = await openStore();
    const job = await runningJob(store);
    const blocker = await openTransaction(admin);
    await blocker.query(`SELECT id FROM ${store.naming.jobs} WHERE id = ? FOR UPDATE`, [job.id]);

    const attempt = store.beginAttempt();
    // The attempt runs on one of the DataSource's sessions, which the handler can set.
    await attempt.manager.query('SET SESSION innodb_lock_wait_timeout = 1');
    await attempt.manager.query(`UPDATE ${scratch} SET v = 'handler' WHERE id = 1`);
    const [{ session }] = (await attempt.manager.query('SELECT CONNECTION_ID() AS session')) as { session: number }[];
    const commit = tracked(thrown(() => attempt.commitSuccess('w', job.id, job.attempt, { done: true })));
    expect(await untilLockWait(admin, store.naming.jobs, commit.isDone)).toBe(true);
    const error = await commit.promise;

    expect(error).toBeInstanceOf(StoreBusyError);
    expect(error.message).toMatch(/innodb_lock_wait_timeout/);
    expect(causeOf(error)?.errno).toBe(1205);
    await blocker.rollbackTransaction();
    // Rolled back whole: the handler's write is gone and the application's session holds no transaction.
    expect(await admin.query(`SELECT v FROM ${scratch} WHERE id = 1`)).toEqual([{ v: 'before' }]);
    expect(await admin.query('SELECT trx_id FROM information_schema.innodb_trx WHERE trx_mysql_thread_id = ?', [session])).toEqual([]);
    // The lease is untouched, so the attempt may report again and is applied.
    expect(await store.jobGet({ jobId: job.id })).toMatchObject({ state: 'running', attempt: 1 });
    const again = store.beginAttempt();
    await again.manager.query(`UPDATE ${scratch} SET v = 'handler' WHERE id = 1`);
    expect(await again.commitSuccess('w', job.id, job.attempt, { done: true })).toEqual({ jobId: job.id, attempt: 1, status: 'applied', state: 'succeeded' });
    expect(await admin.query(`SELECT v FROM ${scratch} WHERE id = 1`)).toEqual([{ v: 'handler' }]);
    await admin.query(`UPDATE ${scratch} SET v = 'before' WHERE id = 1`);
  });

  it("an attempt's outcome write that the server rolls back to break a deadlock fails with StoreBusyError, and the other side goes on", async () => {
    const { store } = await openStore();
    const job = await runningJob(store);
    const blocker = await openTransaction(admin);
    await weigh(blocker);
    await blocker.query(`SELECT id FROM ${store.naming.jobs} WHERE id = ? FOR UPDATE`, [job.id]);

    const attempt = store.beginAttempt();
    await attempt.manager.query(`UPDATE ${scratch} SET v = 'handler' WHERE id = 1`);
    const commit = tracked(thrown(() => attempt.commitSuccess('w', job.id, job.attempt, null)));
    expect(await untilLockWait(admin, store.naming.jobs, commit.isDone)).toBe(true);
    // The blocker now waits for the row the handler wrote: a cycle, which the server breaks at once.
    await blocker.query(`UPDATE ${scratch} SET v = 'blocker' WHERE id = 1`);
    const error = await commit.promise;

    expect(error).toBeInstanceOf(StoreBusyError);
    expect(error.message).toMatch(/deadlock/);
    expect(causeOf(error)?.errno).toBe(1213);
    await blocker.commitTransaction();
    expect(await admin.query(`SELECT v FROM ${scratch} WHERE id = 1`)).toEqual([{ v: 'blocker' }]);
    expect(await store.jobGet({ jobId: job.id })).toMatchObject({ state: 'running', attempt: 1 });
    await admin.query(`DELETE FROM ${scratch} WHERE id > 1`);
    await admin.query(`UPDATE ${scratch} SET v = 'before' WHERE id = 1`);
  });

  it('an outcome batch of the store\'s own that the server rolls back to break a deadlock runs again, and is applied once the other side commits', async () => {
    const sent: string[] = [];
    const { store } = await openStore({ onStatement: (text) => sent.push(text) });
    const first = await runningJob(store);
    const second = await runningJob(store);
    const [low, high] = [first.id, second.id].sort();
    const blocker = await openTransaction(admin);
    await weigh(blocker);
    await blocker.query(`SELECT id FROM ${store.naming.jobs} WHERE id = ? FOR UPDATE`, [high]);
    sent.length = 0;

    // The batch locks its jobs in id order: it takes the lower one, then waits for the blocker's.
    const outcomes = [first, second].map((job) => ({ jobId: job.id, attempt: job.attempt, kind: 'succeeded' as const }));
    const batch = tracked(store.jobCompleteMany({ workerId: 'w', outcomes }));
    expect(await untilLockWait(admin, store.naming.jobs, batch.isDone)).toBe(true);
    // Closing the cycle: the server rolls the lighter transaction, the batch, back; its retry then waits for both rows.
    await blocker.query(`SELECT id FROM ${store.naming.jobs} WHERE id = ? FOR UPDATE`, [low]);
    expect(await untilLockWait(admin, store.naming.jobs, batch.isDone)).toBe(true);
    await blocker.commitTransaction();

    expect(await batch.promise).toEqual(outcomes.map((o) => ({ jobId: o.jobId, attempt: 1, status: 'applied', state: 'succeeded' })));
    // The locking read went out twice: the first try, rolled back by the server, and the one that committed.
    expect(sent.filter((text) => text.includes(`FROM ${store.naming.jobs} j WHERE j.id IN (?) ORDER BY j.id FOR UPDATE`))).toHaveLength(2);
    await admin.query(`DELETE FROM ${scratch} WHERE id > 1`);
  });

  it('an enqueue in a host transaction that waits on a unique key past innodb_lock_wait_timeout fails with StoreBusyError, and leaves the key to the transaction that holds it', async () => {
    const { dataSource, store } = await openStore();
    const holder = await openTransaction(dataSource);
    const held = await store.jobEnqueue({ job: { name: 'digest', payload: 1, uniqueKey: 'user:42' }, manager: holder.manager });
    const waiter = await openTransaction(dataSource);
    await waiter.query('SET SESSION innodb_lock_wait_timeout = 1');
    const enqueue = tracked(thrown(() => store.jobEnqueue({ job: { name: 'digest', payload: 2, uniqueKey: 'user:42' }, manager: waiter.manager })));
    expect(await untilLockWait(admin, store.naming.locks, enqueue.isDone)).toBe(true);
    const error = await enqueue.promise;

    expect(error).toBeInstanceOf(StoreBusyError);
    expect(causeOf(error)?.errno).toBe(1205);
    await waiter.query('SET SESSION innodb_lock_wait_timeout = DEFAULT');
    await waiter.rollbackTransaction();
    await holder.commitTransaction();
    expect(await admin.query(`SELECT id FROM ${store.naming.jobs}`)).toEqual([{ id: held.id }]);
  });
});
