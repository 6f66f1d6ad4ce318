import { describe, expect, it } from '@jest/globals';
import { StoreUnavailableError } from '../../lib/core/index.js';
import type { PgPool } from '../../lib/store/postgres/pg-executor.js';
import { HeldPool } from '../../lib/store/postgres/pg-held-pool.js';
import { settle } from '../support/manual-timers.js';

/** A pool whose connections answer when the test says, and that records how each went back. */
function fakePool() {
  const releases: Array<boolean | Error | undefined> = [];
  const answers: Array<{ resolve: (rows: unknown[]) => void; reject: (error: Error) => void }> = [];
  // A test signal: resolves at the next release, however long the pool's own timer takes to fire.
  const waiters: Array<() => void> = [];
  const nextRelease = () => new Promise<void>((resolve) => waiters.push(resolve));
  let ended = 0;
  const pool = {
    connect: async () => {
      let once = false;
      return {
        query: () => new Promise((resolve, reject) => answers.push({ resolve: (rows) => resolve({ rows }), reject })),
        // node-postgres throws on a second release of one checkout; so does this one.
        release: (destroy?: boolean | Error) => {
          if (once) throw new Error('Release called on client which has already been released to the pool.');
          once = true;
          releases.push(destroy);
          for (const waiter of waiters.splice(0)) waiter();
        },
        on: () => undefined,
        removeListener: () => undefined,
      };
    },
    query: async () => ({ rows: [] }),
    end: async () => void (ended += 1),
  };
  return { pool: pool as unknown as PgPool & { end(): Promise<void> }, releases, answers, ended: () => ended, nextRelease };
}

describe('issue 35 item 6: the store gives its connections back when the host ends the pool', () => {
  it('issue 35 item 6: the pool ending destroys a connection still running a statement, once, and refuses new checkouts', async () => {
    const { pool, releases, answers, ended, nextRelease } = fakePool();
    const held = new HeldPool(pool, 0);
    const statement = held.query({ text: 'SELECT pg_sleep(3600)' });
    await settle();
    // Its wait of 0 ms is a real timer, which a loaded machine may fire after a few turns of the loop.
    const released = nextRelease();
    await pool.end();
    expect(ended()).toBe(1);
    await released;
    expect(releases).toEqual([true]);
    // The statement's own release, when its connection fails under it, is not a second one.
    answers[0]!.reject(new Error('Connection terminated'));
    await expect(statement).rejects.toThrow('Connection terminated');
    expect(releases).toEqual([true]);
    await expect(held.connect()).rejects.toBeInstanceOf(StoreUnavailableError);
  });

  it('issue 35 item 6: a connection given back within the wait goes back as usual', async () => {
    const { pool, releases, answers } = fakePool();
    const held = new HeldPool(pool, 60_000);
    const statement = held.query({ text: 'SELECT 1' });
    await settle();
    void pool.end();
    answers[0]!.resolve([{ one: 1 }]);
    await expect(statement).resolves.toEqual({ rows: [{ one: 1 }] });
    await settle();
    expect(releases).toEqual([undefined]);
  });

  it('issue 35 item 6: a statement that fails discards its connection, as the pool’s own query does', async () => {
    const { pool, releases, answers } = fakePool();
    const held = new HeldPool(pool);
    const failing = held.query({ text: 'SELECT broken' });
    await settle();
    const error = new Error('cached plan must not change result type');
    answers[0]!.reject(error);
    await expect(failing).rejects.toBe(error);
    expect(releases).toEqual([error]);
  });
});
