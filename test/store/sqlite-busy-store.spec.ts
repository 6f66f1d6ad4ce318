import { afterEach, describe, expect, it } from '@jest/globals';
import { StoreBusyError } from '../../lib/core/index.js';
import type { SqliteJobStore } from '../../lib/store/index.js';
import { SqliteNeighbour } from '../support/sqlite-neighbour.js';
import { cleanupFiles, first, sqliteFile, stallMonitor, type SqliteFile } from './sqlite-busy.support.js';

// The store's own operations against a real second process that holds the file's write lock when
// told to. Each step takes the lock, starts the operation, waits until the operation has met the
// lock at least once (two BEGIN IMMEDIATE tries on the parent's connection), then frees the lock.

let neighbour: SqliteNeighbour | undefined;
afterEach(async () => {
  await neighbour?.stop();
  neighbour = undefined;
  await cleanupFiles();
});

/** Runs `operation` while the neighbour holds the lock, and frees it once the operation is waiting. */
async function underLock<T>(file: SqliteFile, operation: () => Promise<T>): Promise<T> {
  await neighbour!.lock();
  const running = operation();
  expect(await first(file.begins.after(2), running)).toBe('signal');
  await neighbour!.release();
  return running;
}

const claim = (store: SqliteJobStore, workerId = 'w') => store.jobClaim({ workerId, limit: 10, queues: ['default'], leaseMs: 60_000 });

describe("issue 19 item 6: SQLite with several processes: the store's own operations", () => {
  it('issue 19 item 6: migrate, enqueue, claim, heartbeat, complete, sweep and operator writes wait out another process\'s lock without blocking the event loop', async () => {
    const file = await sqliteFile();
    // A fresh file, opened first by the neighbour: switching it to WAL needs the file to itself.
    neighbour = await SqliteNeighbour.start(file.database);
    const stalls = stallMonitor();
    await underLock(file, () => file.store.migrate());
    expect(String(await file.dataSource.query('PRAGMA journal_mode').then((rows: { journal_mode: string }[]) => rows[0]!.journal_mode))).toBe('wal');

    const { store } = file;
    const { id } = await underLock(file, () => store.jobEnqueue({ job: { name: 'busy.work', payload: { n: 1 } } }));
    const [job] = await underLock(file, () => claim(store));
    expect(job).toMatchObject({ id, attempt: 1, state: 'running' });
    const beat = await underLock(file, () => store.jobHeartbeat({ workerId: 'w', leases: [{ jobId: id, attempt: 1 }], leaseMs: 60_000 }));
    expect(beat.renewed).toHaveLength(1);
    const [outcome] = await underLock(file, () => store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: id, attempt: 1, kind: 'succeeded' }] }));
    expect(outcome).toMatchObject({ status: 'applied', state: 'succeeded' });
    expect(await underLock(file, () => store.jobExpireLeases({ limit: 10 }))).toEqual([]);
    await underLock(file, () => store.queuePause({ queue: 'default' }));
    const schedule = await underLock(file, () => store.scheduleUpsert({ schedule: { name: 'busy.tick', everyMs: 60_000 } }));
    expect((await store.scheduleGet({ scheduleId: schedule.schedule.id }))?.name).toBe('busy.tick');
    expect(stalls.stop()).toBeLessThan(2_000);
  });

  it('issue 19 item 6: reads do not wait for another process\'s write lock, and operations queued in the process all land once it is free', async () => {
    const file = await sqliteFile();
    await file.store.migrate();
    neighbour = await SqliteNeighbour.start(file.database);
    const { store } = file;
    const { id } = await store.jobEnqueue({ job: { name: 'busy.work', payload: {} } });
    await neighbour.lock();
    const stalls = stallMonitor();
    // WAL: readers see the last committed state while another process writes.
    expect((await store.jobGet({ jobId: id }))?.state).toBe('scheduled');
    expect(await store.jobList()).toHaveLength(1);
    const writes = Promise.all([store.jobEnqueue({ job: { name: 'busy.work', payload: {} } }), claim(store), store.queueResume({ queue: 'other' })]);
    expect(await first(file.begins.after(2), writes)).toBe('signal');
    await neighbour.release();
    const [, claimed] = await writes;
    expect(stalls.stop()).toBeLessThan(2_000);
    expect(claimed.length).toBeGreaterThanOrEqual(1);
    expect(await store.jobList()).toHaveLength(2);
  });

  it('issue 19 item 6: a lock held past busyTimeoutMs fails the store\'s writes with StoreBusyError, never a raw SqliteError, and the store works once it is free', async () => {
    const file = await sqliteFile(300);
    await file.store.migrate();
    neighbour = await SqliteNeighbour.start(file.database);
    const { store } = file;
    await store.jobEnqueue({ job: { name: 'busy.work', payload: {} } });
    await neighbour.lock();
    const sentence = 'The SQLite database stayed locked by another process for 300 ms, so the transaction could not begin and nothing was written.';
    for (const operation of [() => claim(store), () => store.jobEnqueue({ job: { name: 'busy.work', payload: {} } }), () => store.queuePause({ queue: 'default' })]) {
      const error = await operation().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreBusyError);
      expect((error as Error).message).toBe(sentence);
    }
    await neighbour.release();
    expect(await claim(store)).toHaveLength(1);
    expect(await store.jobList()).toHaveLength(1);
  });
});
