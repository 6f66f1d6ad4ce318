import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { MysqlJobStore } from '../../lib/store/index.js';
import { dropInstallation, openMariadbDataSource, uniquePrefix } from '../support/mariadb.js';
import { untilLockWait } from '../support/mariadb-lock-waits.js';
import { tracked } from '../support/lock-waits.js';

describe('MySQL store enqueue (MariaDB)', () => {
  let dataSource: DataSource;
  let store: MysqlJobStore;

  beforeAll(async () => {
    dataSource = await openMariadbDataSource();
    store = new MysqlJobStore({ dataSource, tablePrefix: uniquePrefix('enq'), poolSize: 4 });
    await store.migrate();
  });
  afterAll(async () => {
    await store.close();
    await dropInstallation(dataSource, store.naming);
    await dataSource.destroy();
  });

  it("declares no shared connection pool: its claims and heartbeats never wait behind attempts on the DataSource's", () => {
    expect(store.capabilities).toEqual({ transactionalEnqueue: true, wakeHints: 'process', concurrentTransactions: true, attemptTransactions: true });
  });

  it("writes a batch larger than the server's max_allowed_packet, split over several queries", async () => {
    const [{ packet }] = (await dataSource.query('SELECT @@max_allowed_packet AS packet')) as { packet: number | string }[];
    const payloadChars = 200 * 1024;
    const count = Math.ceil((Number(packet) * 1.5) / payloadChars);
    const jobs = Array.from({ length: count }, (_, i) => ({ name: 'big', payload: { i, blob: 'x'.repeat(payloadChars) } }));
    const results = await store.jobEnqueueMany({ jobs });
    expect(results).toHaveLength(count);
    expect(results.every((r) => r.created)).toBe(true);
    const last = await store.jobGet({ jobId: results.at(-1)!.id });
    expect((last!.payload as { i: number; blob: string }).blob).toHaveLength(payloadChars);
  });

  it('plans a batch again when another transaction commits one of its ids first, writing the rest once', async () => {
    const shared = '0192a0b0-0000-7000-8000-00000000aaa1';
    const own = '0192a0b0-0000-7000-8000-00000000aaa2';
    let releaseHost!: () => void;
    const hostMayCommit = new Promise<void>((resolve) => (releaseHost = resolve));
    let hostWrote!: () => void;
    const written = new Promise<void>((resolve) => (hostWrote = resolve));
    // The host transaction inserts the shared id and stays open; the store's batch then meets it.
    const host = dataSource.transaction(async (manager) => {
      await store.jobEnqueue({ job: { id: shared, name: 'host', payload: 1 }, manager });
      hostWrote();
      await hostMayCommit;
    });
    await written;
    const batch = store.jobEnqueueMany({ jobs: [{ id: own, name: 'batch', payload: 2 }, { id: shared, name: 'batch', payload: 3 }] });
    // The batch's INSERT waits on the host's uncommitted row for the shared id (read from InnoDB's
    // own status: information_schema.innodb_trx is a cache a poller never sees refreshed).
    expect(await untilLockWait(dataSource, store.naming.jobs, () => false)).toBe(true);
    releaseHost();
    await host;
    expect(await batch).toEqual([
      { id: own, created: true },
      { id: shared, created: false },
    ]);
    expect((await store.jobGet({ jobId: shared }))!.name).toBe('host');
    expect((await store.jobGet({ jobId: own }))!.name).toBe('batch');
    const [{ n }] = (await dataSource.query(`SELECT COUNT(*) AS n FROM ${store.naming.jobs} WHERE id IN (?, ?)`, [shared, own])) as { n: number }[];
    expect(Number(n)).toBe(2);
  });

  it("enqueues different unique keys from open REPEATABLE READ transactions without either waiting on the other's gap", async () => {
    // MySQL's default level, as an application leaves its sessions: a locking read that found no
    // holder took a gap lock, so the second transaction's INSERT waited on the first, and the
    // first's next key then closed a cycle the server broke with a deadlock.
    const [{ level }] = (await dataSource.query('SELECT @@session.tx_isolation AS level')) as { level: string }[];
    expect(level).toBe('REPEATABLE-READ');
    const name = `gap-${Date.now()}`;
    const first = dataSource.createQueryRunner();
    const second = dataSource.createQueryRunner();
    await Promise.all([first.startTransaction(), second.startTransaction()]);
    try {
      const a1 = await store.jobEnqueue({ job: { name, payload: 1, uniqueKey: 'a1' }, manager: first.manager });
      const b = tracked(store.jobEnqueue({ job: { name, payload: 2, uniqueKey: 'a2' }, manager: second.manager }));
      expect(await untilLockWait(dataSource, store.naming.jobs, b.isDone)).toBe(false);
      const a3 = await store.jobEnqueue({ job: { name, payload: 3, uniqueKey: 'a3' }, manager: first.manager });
      const a2 = await b.promise;
      await first.commitTransaction();
      await second.commitTransaction();
      expect([a1.created, a2.created, a3.created]).toEqual([true, true, true]);
      // The same key again, now held: no new job, the holder's id.
      expect(await store.jobEnqueue({ job: { name, payload: 4, uniqueKey: 'a2' } })).toMatchObject({ id: a2.id, created: false });
    } finally {
      for (const runner of [first, second]) {
        if (runner.isTransactionActive) await runner.rollbackTransaction();
        await runner.release();
      }
    }
  });

  it('finds a holder committed after a REPEATABLE READ snapshot was taken, and enqueues nothing new', async () => {
    const name = `snap-${Date.now()}`;
    const runner = dataSource.createQueryRunner();
    await runner.startTransaction();
    try {
      // The snapshot is taken by the first read, before the holder commits on another session.
      await runner.query(`SELECT COUNT(*) AS n FROM ${store.naming.jobs}`);
      const holder = await store.jobEnqueue({ job: { name, payload: 1, uniqueKey: 'k' } });
      const again = await store.jobEnqueue({ job: { name, payload: 2, uniqueKey: 'k' }, manager: runner.manager });
      await runner.commitTransaction();
      expect(again).toMatchObject({ id: holder.id, created: false });
      expect(await dataSource.query(`SELECT COUNT(*) AS n FROM ${store.naming.jobs} WHERE name = ?`, [name])).toEqual([{ n: '1' }]);
    } finally {
      if (runner.isTransactionActive) await runner.rollbackTransaction();
      await runner.release();
    }
  });

  it("settles a dependant's edge at once when its parent ended after the host transaction's REPEATABLE READ snapshot", async () => {
    const name = `late-${Date.now()}`;
    await store.jobEnqueue({ job: { name, payload: null, queue: name } });
    const [parent] = await store.jobClaim({ workerId: 'w', limit: 1, queues: [name], leaseMs: 60_000 });
    const runner = dataSource.createQueryRunner();
    await runner.startTransaction();
    try {
      // The snapshot sees the parent running; it succeeds on another session before the enqueue.
      expect(await runner.query(`SELECT state FROM ${store.naming.jobs} WHERE id = ?`, [parent!.id])).toEqual([{ state: 'running' }]);
      expect(await store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: parent!.id, attempt: 1, kind: 'succeeded' }] })).toMatchObject([{ status: 'applied', state: 'succeeded' }]);
      const child = await store.jobEnqueue({ job: { name: `${name}.child`, payload: null, queue: name, dependsOn: [parent!.id] }, manager: runner.manager });
      await runner.commitTransaction();
      // Due now: an edge written open would have waited for the settle sweep.
      expect(await store.jobGet({ jobId: child.id })).toMatchObject({ state: 'scheduled' });
      expect(await dataSource.query(`SELECT settled FROM ${store.naming.dependencies} WHERE child_id = ?`, [child.id])).toEqual([{ settled: 1 }]);
    } finally {
      if (runner.isTransactionActive) await runner.rollbackTransaction();
      await runner.release();
    }
  });
});
