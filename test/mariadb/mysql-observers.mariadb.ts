import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { DataSource, QueryRunner } from 'typeorm';
import { MysqlConnections } from '../../lib/store/mysql/mysql-connections.js';
import { mysqlInstall } from '../../lib/store/mysql/mysql-install.js';
import { toMysqlInstant } from '../../lib/store/mysql/mysql-instant.js';
import { historyRead } from '../../lib/store/mysql/mysql-maintenance.js';
import { migrateMysql } from '../../lib/store/mysql/mysql-migrator.js';
import { mysqlNaming } from '../../lib/store/mysql/mysql-naming.js';
import { observerCommit, observerFail, observerLease, observerList } from '../../lib/store/mysql/mysql-observers.js';
import { dropInstallation, openMariadbDataSource, uniquePrefix } from '../support/mariadb.js';

const START = Date.UTC(2026, 0, 1);
const LEASE_MS = 30_000;
const JOB = '00000000-0000-7000-8000-000000000001';

describe('MySQL store observers (MariaDB)', () => {
  let dataSource: DataSource;
  // One session, so the clock set on it (SET timestamp, which UTC_TIMESTAMP follows) holds for every call.
  let conns: MysqlConnections;
  const naming = mysqlNaming(uniquePrefix('obs'));
  const runners: QueryRunner[] = [];
  let now = START;

  const setClock = async (ms: number) => {
    now = ms;
    await conns.session((db) => db.run('SET timestamp = ?', [ms / 1000]));
  };
  const advance = (ms: number) => setClock(now + ms);
  const hostTransaction = async (): Promise<QueryRunner> => {
    const runner = dataSource.createQueryRunner();
    runners.push(runner);
    await runner.startTransaction();
    return runner;
  };
  const entry = (name: string, db: { query(sql: string, values?: unknown[]): Promise<unknown> } = dataSource) =>
    db.query(`INSERT INTO ${naming.history} (job_id, name, at, state, attempt) VALUES (?, ?, ?, 'scheduled', 0)`, [JOB, name, toMysqlInstant(now)]);
  const lease = (workerId: string, filter: { to?: ('succeeded' | 'running')[]; jobs?: string[] } = {}) =>
    observerLease(conns, naming, { observer: 'audit', workerId, leaseMs: LEASE_MS, to: filter.to ?? null, jobs: filter.jobs ?? null });
  const commit = (workerId: string, position: string) => observerCommit(conns, naming, { observer: 'audit', workerId, position });
  const cursor = async () => {
    const [row] = await conns.session((db) => db.query(`SELECT last_id, failures, retry_at, last_error, states, jobs FROM ${naming.cursors} WHERE observer = 'audit'`));
    return row;
  };

  beforeAll(async () => {
    dataSource = await openMariadbDataSource();
    conns = new MysqlConnections(dataSource, 1);
    await migrateMysql(conns, naming, mysqlInstall());
  });
  beforeEach(async () => {
    await Promise.all(
      runners.splice(0).map(async (runner) => {
        if (runner.isTransactionActive) await runner.rollbackTransaction();
        await runner.release();
      }),
    );
    for (const table of [naming.history, naming.maintenance, naming.cursors]) await dataSource.query(`TRUNCATE TABLE ${table}`);
    await setClock(START);
  });
  afterAll(async () => {
    await Promise.all(runners.map((runner) => runner.release()));
    await conns.close();
    await dropInstallation(dataSource, naming);
    await dataSource.destroy();
  });

  it('starts a new observer after what committed before its lease, and feeds it what was still being written then', async () => {
    await entry('before');
    const writer = await hostTransaction();
    await entry('in flight', writer);
    const start = await lease('w');
    expect(start).toEqual({ observer: 'audit', position: '1', failures: 0 });
    expect(await historyRead(conns, naming, { after: start!.position, limit: 10 })).toEqual([]);
    await writer.commitTransaction();
    await entry('after');
    expect((await historyRead(conns, naming, { after: start!.position, limit: 10 })).map((e) => e.name)).toEqual(['in flight', 'after']);
    // A lease of the existing cursor keeps its place, wherever the log is now.
    expect(await lease('w')).toEqual({ observer: 'audit', position: '1', failures: 0 });
  });

  it('leases a cursor to one worker at a time, renews it for its holder, hands it on once lapsed, and records the filter', async () => {
    expect(await lease('a', { to: ['succeeded'], jobs: ['report.send'] })).toEqual({ observer: 'audit', position: '0', failures: 0 });
    expect(await cursor()).toMatchObject({ states: '["succeeded"]', jobs: '["report.send"]' });
    expect(await lease('b')).toBeNull();
    await advance(LEASE_MS - 1);
    expect(await lease('a', { to: ['succeeded', 'running'] })).not.toBeNull();
    expect(await cursor()).toMatchObject({ states: '["succeeded","running"]', jobs: null });
    await advance(LEASE_MS - 1);
    expect(await lease('b')).toBeNull();
    await advance(1);
    expect(await lease('b')).not.toBeNull();
    expect(await lease('a')).toBeNull();
  });

  it('moves a cursor only forward, on a live lease, and answers a commit that changes nothing as held', async () => {
    const start = await lease('a');
    for (const name of ['e1', 'e2', 'e3']) await entry(name);
    const [e1, e2, e3] = await historyRead(conns, naming, { after: start!.position, limit: 10 });
    expect(await commit('a', e2!.position)).toBe(true);
    // The same commit again, at the same instant, changes no column: still true.
    expect(await commit('a', e2!.position)).toBe(true);
    expect(await commit('a', e1!.position)).toBe(true);
    expect(await cursor()).toMatchObject({ last_id: 2 });
    expect(await commit('b', e3!.position)).toBe(false);
    await advance(LEASE_MS);
    expect(await commit('a', e3!.position)).toBe(false);
    expect(await cursor()).toMatchObject({ last_id: 2 });
    expect(await lease('b')).toEqual({ observer: 'audit', position: '2', failures: 0 });
  });

  it('records a failed delivery: the lease goes, the cursor backs off, and failures count until a commit', async () => {
    await lease('a');
    await entry('e1');
    expect(await observerFail(conns, naming, { observer: 'audit', workerId: 'b', error: 'not mine', retryDelayMs: 10_000 })).toBe(false);
    expect(await observerFail(conns, naming, { observer: 'audit', workerId: 'a', error: 'webhook down', retryDelayMs: 10_000 })).toBe(true);
    expect(await cursor()).toMatchObject({ failures: 1, retry_at: toMysqlInstant(now + 10_000), last_error: 'webhook down' });
    expect(await lease('a')).toBeNull();
    await advance(10_000);
    const retry = await lease('c');
    expect(retry).toEqual({ observer: 'audit', position: '0', failures: 1 });
    const [e1] = await historyRead(conns, naming, { after: retry!.position, limit: 10 });
    expect(await commit('c', e1!.position)).toBe(true);
    expect(await cursor()).toMatchObject({ last_id: 1, failures: 0, retry_at: null, last_error: null });
  });

  it('lists cursors by observer with their lag in delivery order, counted up to the scan, and a lease only while it is live', async () => {
    const start = await lease('a');
    await observerLease(conns, naming, { observer: 'billing', workerId: 'b', leaseMs: LEASE_MS, to: null, jobs: null });
    await entry('e1');
    await advance(1_000);
    await entry('e2');
    await entry('e3');
    // An entry still being written is not behind anyone yet.
    const writer = await hostTransaction();
    await entry('in flight', writer);

    const listed = await observerList(conns, naming, { limit: 10, lagScan: 3 });
    expect(listed).toEqual([
      {
        observer: 'audit',
        position: start!.position,
        leasedBy: 'a',
        leasedUntil: new Date(START + LEASE_MS),
        failures: 0,
        retryAt: null,
        lastError: null,
        updatedAt: new Date(START),
        lag: 3,
        oldestUndeliveredAt: new Date(START),
      },
      expect.objectContaining({ observer: 'billing', position: '0', lag: 3 }),
    ]);
    await writer.commitTransaction();
    // One more than the scan is all it counts: the cut tells an operator there is more.
    expect((await observerList(conns, naming, { limit: 10, lagScan: 3 })).map((s) => s.lag)).toEqual([3, 3]);
    expect((await observerList(conns, naming, { limit: 10, lagScan: 10 })).map((s) => s.lag)).toEqual([4, 4]);

    await commit('a', '3');
    await advance(LEASE_MS);
    const [audit] = await observerList(conns, naming, { limit: 1, lagScan: 10 });
    expect(audit).toMatchObject({ observer: 'audit', position: '3', leasedBy: null, leasedUntil: null, lag: 1, oldestUndeliveredAt: new Date(START + 1_000) });
    await commit('a', '4');
    expect(await observerList(conns, naming, { limit: 1, lagScan: 10 })).toEqual([expect.objectContaining({ lag: 1 })]);
  });
});
