import { describe, expect, it } from '@jest/globals';
import { DataSource, type QueryRunner } from 'typeorm';
import { MemoryJobStore, SqliteJobStore } from '../../lib/store/index.js';
import { dataSource, freshStore, useAdapterDataSource } from '../support/postgres-adapter.js';

// storeHealth (issue 37): what holds back the cleanup of the jobs table, as the dashboard's overview
// shows it. On PostgreSQL a session here really holds the horizon; the other stores keep no old row
// versions and say nothing.

useAdapterDataSource();

describe('storeHealth', () => {
  it.each([
    ['REPEATABLE READ reader, with a snapshot and no xid', 'BEGIN ISOLATION LEVEL REPEATABLE READ', 'SELECT 1'],
    ['writer, with an xid', 'BEGIN', 'SELECT pg_current_xact_id()'],
  ])('on PostgreSQL names the oldest open transaction of another session, a %s, and counts the jobs table', async (_kind, begin, hold) => {
    const store = freshStore();
    await store.migrate();
    await store.jobEnqueueMany({ jobs: [1, 2, 3].map((n) => ({ name: 'health', payload: n })) });
    const holder: QueryRunner = dataSource.createQueryRunner();
    await holder.connect();
    try {
      const [{ pid }] = (await holder.query('SELECT pg_backend_pid() AS pid')) as [{ pid: number }];
      await holder.query(begin);
      await holder.query(hold);
      const health = await store.storeHealth();
      // Another spec's transaction may be older still; this one is open, so some transaction is named.
      expect(health.oldestTransaction).not.toBeNull();
      expect(health.oldestTransaction!.ageMs).toBeGreaterThanOrEqual(0);
      if (health.oldestTransaction!.pid === pid) expect(health.oldestTransaction!.state).toBe('idle in transaction');
      expect(Number.isInteger(health.horizonXids)).toBe(true);
      expect(Number.isInteger(health.deadJobRows)).toBe(true);
      expect(Number.isInteger(health.liveJobRows)).toBe(true);
      await holder.query('ROLLBACK');
    } finally {
      await holder.release();
    }
  });

  it('says nothing on SQLite and in memory, which keep no old row versions', async () => {
    const sqlite = await new DataSource({ type: 'better-sqlite3', database: ':memory:' }).initialize();
    try {
      const stores = [new SqliteJobStore({ dataSource: sqlite }), new MemoryJobStore()];
      await stores[0]!.migrate();
      for (const store of stores) {
        expect(await store.storeHealth()).toEqual({ oldestTransaction: null, horizonXids: null, deadJobRows: null, liveJobRows: null, lastVacuumAt: null });
      }
    } finally {
      await sqlite.destroy();
    }
  });
});
