import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource, QueryRunner } from 'typeorm';
import { MysqlJobStore } from '../../lib/store/index.js';
import { tracked } from '../support/lock-waits.js';
import { untilLockWait } from '../support/mariadb-lock-waits.js';
import { dropInstallation, heldTransactions, openMariadbDataSource, uniquePrefix } from '../support/mariadb.js';

/*
 * A heartbeat and a claim that judge one lease at its deadline, on the MySQL store. A claim counts
 * the jobs that run under a cap, and a lease that has passed by its clock frees room; a heartbeat
 * renews a lease that has not passed by its own. Read a moment apart, the two clocks can disagree,
 * and a heartbeat that renewed a lease the claim had already given away would leave two jobs
 * running under a cap of one. Each case holds a lock where it wants the interleaving, waits until
 * InnoDB shows the racing calls waiting (mariadb-lock-waits.ts), and lets go.
 */

const LEASE_MS = 60_000;
let admin: DataSource;
let dataSource: DataSource;
const cleanups: (() => Promise<void>)[] = [];
const held = heldTransactions();

beforeAll(async () => {
  admin = await openMariadbDataSource({ poolSize: 4 });
  dataSource = await openMariadbDataSource({ poolSize: 4 });
});

afterAll(async () => {
  await held.release();
  for (const cleanup of cleanups) await cleanup();
  await dataSource.destroy();
  await admin.destroy();
});

/**
 * A store whose key `k` is capped at 1, with one job of the key running (in queue `a` with
 * `queue: 'a'`) and one waiting in `default`; the running job's lease ends 3 s from now. With
 * `other`, the running job has a companion without a key, running on the same worker, claimed
 * first so that its id sorts first.
 */
async function capped(options: { readonly queue?: string; readonly other?: boolean } = {}) {
  const store = new MysqlJobStore({ dataSource, tablePrefix: uniquePrefix('lease'), poolSize: 4 });
  cleanups.push(async () => {
    await store.close();
    await dropInstallation(admin, store.naming);
  });
  await store.migrate();
  await store.concurrencyLimitSet({ target: { key: 'k' }, max: 1 });
  const queue = options.queue ?? 'default';
  const [other] = options.other
    ? (await store.jobEnqueueMany({ jobs: [{ name: 'race', payload: 'other', queue: 'other' }] }), await store.jobClaim({ workerId: 'w1', limit: 1, queues: ['other'], leaseMs: LEASE_MS }))
    : [];
  await store.jobEnqueueMany({ jobs: [{ name: 'race', payload: 0, queue, concurrencyKey: 'k' }] });
  await store.jobEnqueueMany({ jobs: [{ name: 'race', payload: 1, concurrencyKey: 'k' }] });
  const [running] = await store.jobClaim({ workerId: 'w1', limit: 1, queues: [queue], leaseMs: LEASE_MS });
  await admin.query(`UPDATE ${store.naming.jobs} SET leased_until = UTC_TIMESTAMP(3) + INTERVAL 3 SECOND WHERE id = ?`, [running!.id]);
  return { store, running: running!, other };
}

/** Whether the job's lease has not passed yet, by the database's clock. */
async function beforeDeadline(store: MysqlJobStore, id: string): Promise<boolean> {
  const [{ ahead }] = await admin.query(`SELECT UTC_TIMESTAMP(3) < leased_until AS ahead FROM ${store.naming.jobs} WHERE id = ?`, [id]);
  return Number(ahead) === 1;
}

async function pastDeadline(store: MysqlJobStore, id: string): Promise<void> {
  for (;;) {
    const [{ past }] = await admin.query(`SELECT UTC_TIMESTAMP(3) > leased_until AS past FROM ${store.naming.jobs} WHERE id = ?`, [id]);
    if (Number(past) === 1) return;
  }
}

const hostTransaction = (): Promise<QueryRunner> => held.open(admin);

/** Jobs of key `k` running on a lease that has not passed, by the database's clock. */
async function liveUnderK(store: MysqlJobStore): Promise<number> {
  const [{ n }] = await admin.query(
    `SELECT COUNT(*) AS n FROM ${store.naming.jobs} WHERE concurrency_key = 'k' AND state = 'running' AND leased_until > UTC_TIMESTAMP(3)`,
  );
  return Number(n);
}

describe('a heartbeat and a claim meeting at a lease deadline (MySQL store)', () => {
  it('a heartbeat that began before the deadline and waited past it renews nothing, and no claim gives its room away meanwhile', async () => {
    const { store, running } = await capped();
    // Another transaction holds the running job (its outcome, say, in flight).
    const host = await hostTransaction();
    await host.query(`SELECT id FROM ${store.naming.jobs} WHERE id = ? FOR UPDATE`, [running.id]);
    const beat = tracked(store.jobHeartbeat({ workerId: 'w1', leases: [{ jobId: running.id, attempt: running.attempt }], leaseMs: LEASE_MS }));
    expect(await untilLockWait(admin, store.naming.jobs, beat.isDone)).toBe(true);
    // The heartbeat was sent, and waits, before the deadline.
    expect(await beforeDeadline(store, running.id)).toBe(true);
    await pastDeadline(store, running.id);
    // By its clock the lease has passed; the job it cannot lock still counts, so nothing starts.
    expect(await store.jobClaim({ workerId: 'w2', limit: 1, queues: ['default'], leaseMs: LEASE_MS })).toEqual([]);
    await host.commitTransaction();
    const result = await beat.promise;
    expect(result.renewed).toEqual([]);
    expect(result.lost).toEqual([{ jobId: running.id, attempt: running.attempt }]);
    expect(await liveUnderK(store)).toBe(0);
    // Once nothing holds the lapsed job, its room is free again: one job starts, no more.
    expect(await store.jobClaim({ workerId: 'w2', limit: 2, queues: ['default'], leaseMs: LEASE_MS })).toHaveLength(1);
    expect(await liveUnderK(store)).toBe(1);
  });

  it('a claim that locked a lapsed job gives its room away, and a heartbeat sent before the deadline and held up past it then renews nothing', async () => {
    // The capped job runs in queue `a`, which the claim below does not serve: only its count of
    // running jobs reads (and locks) it. The heartbeat renews it with a companion whose id sorts
    // first, which another transaction holds, so the heartbeat is held up before it reaches the job.
    const { store, running, other } = await capped({ queue: 'a', other: true });
    expect(other!.id < running.id).toBe(true);
    const host = await hostTransaction();
    await host.query(`SELECT id FROM ${store.naming.jobs} WHERE id = ? FOR UPDATE`, [other!.id]);
    const leases = [other!, running].map((job) => ({ jobId: job.id, attempt: job.attempt }));
    const beat = tracked(store.jobHeartbeat({ workerId: 'w1', leases, leaseMs: LEASE_MS }));
    expect(await untilLockWait(admin, store.naming.jobs, beat.isDone)).toBe(true);
    expect(await beforeDeadline(store, running.id)).toBe(true);
    await pastDeadline(store, running.id);
    const started = await store.jobClaim({ workerId: 'w2', limit: 1, queues: ['default'], leaseMs: LEASE_MS });
    expect(started).toHaveLength(1);
    await host.commitTransaction();
    const result = await beat.promise;
    expect(result.renewed.map((r) => r.jobId)).toEqual([other!.id]);
    expect(result.lost).toEqual([{ jobId: running.id, attempt: running.attempt }]);
    expect(await liveUnderK(store)).toBe(1);
  });
});
