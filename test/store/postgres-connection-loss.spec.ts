import { describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { databaseUrl } from '../support/postgres.js';
import { dataSource, freshStore, useAdapterDataSource } from '../support/postgres-adapter.js';

useAdapterDataSource();

describe('PostgreSQL connection loss', () => {
  it('fails an operation whose connection is terminated mid-transaction, without an unhandled error event, and keeps working', async () => {
    const store = freshStore();
    await store.migrate();
    // Hold the audit log, so the operation's transaction waits inside it on a lock.
    const blocker = new pg.Client({ connectionString: databaseUrl() });
    await blocker.connect();
    await blocker.query('BEGIN');
    await blocker.query(`LOCK TABLE ${store.naming.audit} IN ACCESS EXCLUSIVE MODE`);
    const [{ pid: blockerPid }] = (await blocker.query('SELECT pg_backend_pid() AS pid')).rows;
    const outcome = store.concurrencyLimitSet({ target: { key: 'tenant:lost' }, max: 2 }).then(
      () => 'applied',
      (error: Error) => error.message,
    );
    // Its backend is the one the lock blocks; terminating it is what a restart or an operator does.
    let blocked: number | undefined;
    while (blocked === undefined) {
      const rows = await dataSource.query(`SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, [blockerPid]);
      blocked = rows[0]?.pid;
    }
    await dataSource.query('SELECT pg_terminate_backend($1)', [blocked]);
    expect(await outcome).toMatch(/terminat/i);
    await blocker.query('ROLLBACK');
    await blocker.end();
    // The pool dropped the dead connection; the same operation now goes through.
    await store.concurrencyLimitSet({ target: { key: 'tenant:lost' }, max: 2 });
    expect(await store.concurrencyLimitList()).toContainEqual(expect.objectContaining({ key: 'tenant:lost', max: 2 }));
  });
});
