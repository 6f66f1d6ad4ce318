import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { MysqlJobStore } from '../../lib/store/index.js';
import { dropInstallation, openMariadbDataSource, uniquePrefix } from '../support/mariadb.js';
import { untilLockWait } from '../support/mariadb-lock-waits.js';

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
});
