import { describe, expect, it } from '@jest/globals';
import type { EntityManager } from 'typeorm';
import { PostgresJobStore } from '../../lib/store/index.js';
import { gate, tracked, untilWaiting } from '../support/lock-waits.js';
import { raceStores } from '../support/race-stores.js';

const LEASE_MS = 60_000;

/**
 * Enqueues of one sequence key serialize on the key's row of the sequences table: each interleaving
 * is forced, with the second enqueue seen waiting on that lock before the first one ends.
 */
describe('sequences: concurrent enqueues of one key on PostgreSQL', () => {
  const race = raceStores('seqrace');
  const openStore = () => race.open();

  async function parentOf(store: PostgresJobStore, id: string): Promise<string[]> {
    return (await store.jobEdges({ jobId: id }))!.parents.map((parent) => parent.id);
  }

  /** A host transaction that enqueues into `key` and then waits for the test to let it end. */
  function openEnqueue(store: PostgresJobStore, key: string, end: 'commit' | 'rollback') {
    const hold = gate();
    const inserted = gate();
    let id = '';
    const host = race.dataSource
      .transaction(async (manager: EntityManager) => {
        id = (await store.jobEnqueue({ job: { name: 'first', payload: {}, sequence: { key } }, manager })).id;
        inserted.open();
        await hold.opened;
        if (end === 'rollback') throw new Error('rolled back by the test');
      })
      .catch((error: Error) => {
        if (end === 'commit') throw error;
      });
    return { host, inserted: inserted.opened, release: () => hold.open(), id: () => id };
  }

  /**
   * While `first` holds its transaction open, enqueues into `key` and checks that the enqueue waits
   * on the key's row lock; then lets `first` end and returns the new job's id.
   */
  async function enqueueBehind(store: PostgresJobStore, first: ReturnType<typeof openEnqueue>, key: string): Promise<string> {
    await first.inserted;
    const second = tracked(store.jobEnqueue({ job: { name: 'second', payload: {}, sequence: { key } } }));
    expect(await untilWaiting(race.admin, 'ON CONFLICT (key) DO UPDATE', second.isDone)).toBe(true);
    first.release();
    await first.host;
    return (await second.promise).id;
  }

  it('an enqueue of a key another transaction is appending to waits for its commit, then runs after its job', async () => {
    const store = await openStore();
    const tail = (await store.jobEnqueue({ job: { name: 'tail', payload: {}, sequence: { key: 'k' } } })).id;
    const first = openEnqueue(store, 'k', 'commit');
    const id = await enqueueBehind(store, first, 'k');
    expect(await parentOf(store, first.id())).toEqual([tail]);
    expect(await parentOf(store, id)).toEqual([first.id()]);
    expect(await store.jobGet({ jobId: id })).toMatchObject({ state: 'awaiting_parents', pendingParents: 1 });
    // Only the tail is due, and each job's success releases the next one.
    for (const [done, next] of [[tail, first.id()], [first.id(), id]] as const) {
      const [job] = await store.jobClaim({ workerId: 'w', limit: 10, queues: ['default'], leaseMs: LEASE_MS });
      expect(job!.id).toBe(done);
      await store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: done, attempt: 1, kind: 'succeeded' }] });
      expect(await store.jobGet({ jobId: next })).toMatchObject({ state: 'scheduled' });
    }
  });

  it('an enqueue behind a transaction that rolls back runs after the tail that transaction found', async () => {
    const store = await openStore();
    const tail = (await store.jobEnqueue({ job: { name: 'tail', payload: {}, sequence: { key: 'k' } } })).id;
    const first = openEnqueue(store, 'k', 'rollback');
    const id = await enqueueBehind(store, first, 'k');
    expect(await store.jobGet({ jobId: first.id() })).toBeNull();
    expect(await parentOf(store, id)).toEqual([tail]);
  });

  it('the first enqueues of a new key, racing, chain one behind the other', async () => {
    const store = await openStore();
    const first = openEnqueue(store, 'fresh', 'commit');
    const id = await enqueueBehind(store, first, 'fresh');
    expect(await store.jobGet({ jobId: first.id() })).toMatchObject({ state: 'scheduled' });
    expect(await parentOf(store, id)).toEqual([first.id()]);
  });
});
