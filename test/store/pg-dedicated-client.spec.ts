import { describe, expect, it } from '@jest/globals';
import { PgDedicatedClient } from '../../lib/store/postgres/pg-dedicated-client.js';
import type { PgPool } from '../../lib/store/postgres/pg-executor.js';

/** A pool of one connection whose next query waits until the test answers it. */
function fakePool() {
  const releases: Array<boolean | undefined> = [];
  let answer!: (rows: unknown[]) => void;
  let fail!: (error: Error) => void;
  const client = {
    query: () =>
      new Promise<{ rows: unknown[] }>((resolve, reject) => {
        answer = (rows) => resolve({ rows });
        fail = reject;
      }),
    release: (destroy?: boolean) => {
      releases.push(destroy);
      if (destroy) fail(new Error('Connection terminated'));
    },
    on: () => undefined,
    removeAllListeners: () => undefined,
  };
  const pool = { connect: async () => client, query: async () => ({ rows: [] }) } as unknown as PgPool;
  return { pool, releases, answer: (rows: unknown[]) => answer(rows) };
}

describe('issue 19 item 3: closing the heartbeat connection is bounded', () => {
  it('waits for a call in flight that answers, then gives the connection back to the pool', async () => {
    const { pool, releases, answer } = fakePool();
    const db = new PgDedicatedClient(pool, undefined, 60_000);
    const call = db.query('SELECT 1');
    await new Promise((resolve) => setImmediate(resolve));
    const closing = db.close();
    answer([{ one: 1 }]);
    await closing;
    await expect(call).resolves.toEqual([{ one: 1 }]);
    expect(releases).toEqual([false]);
  });

  it('destroys the connection under a call that does not answer in time, and the call fails', async () => {
    const { pool, releases } = fakePool();
    const db = new PgDedicatedClient(pool, undefined, 0);
    const call = db.query('UPDATE jobs SET leased_until = now()');
    await new Promise((resolve) => setImmediate(resolve));
    await db.close(); // before the fix this waited for the call, forever
    expect(releases).toEqual([true]);
    await expect(call).rejects.toThrow('Connection terminated');
    await expect(db.query('SELECT 1')).rejects.toThrow('The store is closed.');
  });
});
