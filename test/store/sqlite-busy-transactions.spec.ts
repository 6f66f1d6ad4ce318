import { afterEach, describe, expect, it } from '@jest/globals';
import { SeededRandom, StoreBusyError } from '../../lib/core/index.js';
import type { EntityManager } from 'typeorm';
import { AttemptExecutor, FunctionInvoker, silentLogger, type AttemptContext, type AttemptReport } from '../../lib/worker/index.js';
import { AttemptAbort } from '../../lib/worker/attempt-abort.js';
import { SqliteNeighbour } from '../support/sqlite-neighbour.js';
import { cleanupFiles, first, sqliteFile, stallMonitor, type SqliteFile } from './sqlite-busy.support.js';

// Each test puts a real second process on the file and has it hold SQLite's write lock at a chosen
// moment; the tests wait on that process's answers and on the BEGINs the parent's connection runs,
// never on time, except where a short busyTimeoutMs is meant to run out.

let neighbour: SqliteNeighbour | undefined;
afterEach(async () => {
  await neighbour?.stop();
  neighbour = undefined;
  await cleanupFiles();
});

async function setup(busyTimeoutMs?: number): Promise<SqliteFile> {
  const file = await sqliteFile(busyTimeoutMs);
  await file.store.migrate();
  await file.dataSource.query('CREATE TABLE orders (ref TEXT NOT NULL)');
  neighbour = await SqliteNeighbour.start(file.database);
  return file;
}

/** A host transaction as an application writes one: it reads, enqueues through its manager, writes. */
function placeOrder({ dataSource, store }: SqliteFile, ref: string, ran?: { callback: boolean }) {
  return dataSource.transaction(async (manager) => {
    if (ran) ran.callback = true;
    await manager.query('SELECT count(*) FROM orders');
    await store.jobEnqueue({ job: { name: 'order.confirm', payload: { ref } }, manager });
    await manager.query('INSERT INTO orders (ref) VALUES (?)', [ref]);
  });
}

async function orders(file: SqliteFile): Promise<string[]> {
  return (await file.dataSource.query('SELECT ref FROM orders ORDER BY rowid')).map((r: { ref: string }) => r.ref);
}

describe("issue 19 item 6: SQLite with several processes: the host's transaction", () => {
  it("issue 19 item 6: an enqueue inside the host's transaction waits out another process's write lock instead of failing at once", async () => {
    const file = await setup();
    await neighbour!.lock();
    const stalls = stallMonitor();
    const order = placeOrder(file, 'A-1');
    // Two BEGIN IMMEDIATE tries: the transaction met the lock and is backing off, not failed.
    expect(await first(file.begins.after(2), order)).toBe('signal');
    await neighbour!.release();
    await order;
    expect(stalls.stop()).toBeLessThan(2_000);
    expect(await orders(file)).toEqual(['A-1']);
    expect((await file.store.jobList()).map((job) => job.payload)).toEqual([{ ref: 'A-1' }]);
  });

  it("issue 19 item 6: a host transaction that read before another process committed still enqueues (no SQLITE_BUSY_SNAPSHOT)", async () => {
    const file = await setup();
    let neighbourSaw: string | undefined;
    await file.dataSource.transaction(async (manager) => {
      await manager.query('SELECT count(*) FROM orders');
      // The neighbour tries to commit a write between this transaction's read and its enqueue.
      neighbour!.send('write');
      neighbourSaw = await neighbour!.next();
      await file.store.jobEnqueue({ job: { name: 'order.confirm', payload: { ref: 'B-1' } }, manager });
      await manager.query(`INSERT INTO orders (ref) VALUES ('B-1')`);
    });
    // The transaction held the write lock from its BEGIN, so the neighbour had to wait for it.
    expect(neighbourSaw).toBe('busy');
    expect(await neighbour!.next()).toBe('wrote');
    expect(await orders(file)).toEqual(['B-1']);
    expect(await file.store.jobList()).toHaveLength(1);
  });

  it('issue 19 item 6: a host transaction that cannot get the lock within busyTimeoutMs fails with StoreBusyError before its callback runs', async () => {
    const file = await setup(300);
    await neighbour!.lock();
    const ran = { callback: false };
    const error = await placeOrder(file, 'C-1', ran).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreBusyError);
    expect((error as Error).message).toBe(
      'The SQLite database stayed locked by another process for 300 ms, so the transaction could not begin and nothing was written.',
    );
    expect(ran.callback).toBe(false);
    await neighbour!.release();
    // Nothing was left half-open: the next transaction and the store's own writes work.
    await placeOrder(file, 'C-2');
    expect(await orders(file)).toEqual(['C-2']);
    expect(await file.store.jobClaim({ workerId: 'w', limit: 5, queues: ['default'], leaseMs: 30_000 })).toHaveLength(1);
  });
});

/** Runs one attempt of a claimed `ledger.write` job through the worker's real executor. */
function runAttempt(file: SqliteFile, handle: (manager: EntityManager) => Promise<void>) {
  const invoker = new FunctionInvoker({ 'ledger.write': { transaction: true, handle: (_payload, ctx) => handle((ctx as unknown as AttemptContext).entityManager()) } });
  const timers = { setTimeout: (callback: () => void, ms: number) => setTimeout(callback, ms), clearTimeout: (handle: unknown) => clearTimeout(handle as NodeJS.Timeout) };
  const executor = new AttemptExecutor({ store: file.store, invoker, workerId: 'w', random: new SeededRandom(1n), logger: silentLogger, timers });
  return async () => {
    await file.store.jobEnqueue({ job: { name: 'ledger.write', payload: {}, maxAttempts: 3 } });
    const [job] = await file.store.jobClaim({ workerId: 'w', limit: 1, queues: ['default'], leaseMs: 60_000 });
    return { job: job!, report: (abort = new AttemptAbort()) => executor.execute(job!, abort) };
  };
}
async function ledger(file: SqliteFile): Promise<number> {
  return Number((await file.dataSource.query('SELECT count(*) AS n FROM ledger'))[0].n);
}

describe("issue 19 item 6: SQLite with several processes: the attempt's transaction", () => {
  it("issue 19 item 6: a handler's read-then-write through its attempt's EntityManager waits out the lock, and attempt 1 succeeds", async () => {
    const file = await setup();
    await file.dataSource.query('CREATE TABLE ledger (note TEXT NOT NULL)');
    const start = runAttempt(file, async (manager) => {
      await manager.query('SELECT count(*) FROM ledger');
      await manager.query(`INSERT INTO ledger (note) VALUES ('paid')`);
    });
    const { job, report } = await start();
    await neighbour!.lock();
    const stalls = stallMonitor();
    const attempt = report();
    expect(await first(file.begins.after(2), attempt)).toBe('signal');
    await neighbour!.release();
    const done: AttemptReport = await attempt;
    expect(stalls.stop()).toBeLessThan(2_000);
    expect(done).toMatchObject({ kind: 'recorded', result: { status: 'applied' } });
    expect(await file.store.jobGet({ jobId: job.id })).toMatchObject({ state: 'succeeded', attempt: 1 });
    expect(await ledger(file)).toBe(1);
  });

  it('issue 19 item 6: a lock held past busyTimeoutMs fails the attempt with StoreBusyError, retryable, with nothing written', async () => {
    const file = await setup(300);
    await file.dataSource.query('CREATE TABLE ledger (note TEXT NOT NULL)');
    const start = runAttempt(file, async (manager) => {
      await manager.query(`INSERT INTO ledger (note) VALUES ('paid')`);
    });
    const { job, report } = await start();
    await neighbour!.lock();
    const done = await report();
    expect(done.kind).toBe('report');
    expect(done.outcome).toMatchObject({ kind: 'failed', attempt: 1 });
    expect((done.outcome as { error: string }).error).toMatch(/^StoreBusyError: The SQLite database stayed locked by another process for 300 ms/);
    await neighbour!.release();
    await file.store.jobCompleteMany({ workerId: 'w', outcomes: [done.outcome] });
    expect(await file.store.jobGet({ jobId: job.id })).toMatchObject({ state: 'scheduled', attempt: 1, lastError: expect.stringMatching(/^StoreBusyError/) });
    expect(await ledger(file)).toBe(0);
  });

  it('issue 19 item 6: a heartbeat sent while an attempt waits for the lock renews inside that attempt once it opens, not after its handler', async () => {
    const file = await setup();
    let proceed!: () => void;
    const proceeding = new Promise<void>((resolve) => (proceed = resolve));
    const start = runAttempt(file, async (manager) => {
      await manager.query('SELECT 1');
      await proceeding;
    });
    const { job, report } = await start();
    await neighbour!.lock();
    const attempt = report();
    expect(await first(file.begins.after(2), attempt)).toBe('signal');
    const heartbeat = file.store.jobHeartbeat({ workerId: 'w', leases: [{ jobId: job.id, attempt: 1 }], leaseMs: 120_000 });
    await neighbour!.release();
    // The handler is still waiting on `proceeding`; the heartbeat must not wait for it.
    expect(await first(heartbeat.then(() => undefined), attempt)).toBe('signal');
    expect(await heartbeat).toMatchObject({ renewed: [{ jobId: job.id, attempt: 1 }], lost: [] });
    proceed();
    expect(await attempt).toMatchObject({ kind: 'recorded', result: { status: 'applied' } });
  });
});
