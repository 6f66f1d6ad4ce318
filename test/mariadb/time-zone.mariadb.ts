import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource, EntityManager } from 'typeorm';
import { MysqlJobStore } from '../../lib/store/index.js';
import { dropInstallation, openMariadbDataSource, uniquePrefix } from '../support/mariadb.js';
import { openZonedDataSource } from '../support/mariadb-zoned.js';

/*
 * The application's sessions, on which an enqueue in its transaction and an attempt's outcome
 * write run, may be set to any time zone, and its mysql2 driver may convert Dates at any zone.
 * The store judges every lease on the server's UTC clock and writes every instant as UTC, so a
 * zone ahead of UTC must not make a live lease look lapsed, nor a zone behind it a lapsed one look
 * live: each zone below is run both ways. The process's own zone is mysql2's default `timezone`,
 * which the zoned DataSource sets, since Jest cannot change a running process's zone.
 */

/** The store's clock and this process's are the same machine's; a zone mistake is hours. */
const TOLERANCE_MS = 5_000;
const LEASE_MS = 60_000;

const near = (at: Date | null | undefined, expected: number) => {
  expect(at).toBeInstanceOf(Date);
  expect(Math.abs(at!.getTime() - expected)).toBeLessThan(TOLERANCE_MS);
};

/** The session's zone and how far its clock (NOW) runs from the server's UTC clock, in minutes. */
async function sessionZone(db: Pick<EntityManager, 'query'>): Promise<{ zone: string; offset: number }> {
  const [row] = (await db.query('SELECT @@session.time_zone AS zone, TIMESTAMPDIFF(MINUTE, UTC_TIMESTAMP(), NOW()) AS minutes')) as { zone: string; minutes: number | string }[];
  return { zone: row!.zone, offset: Number(row!.minutes) };
}

describe.each([
  ['+05:30', 330],
  ['-09:30', -570],
])("instants and the fence on MySQL (MariaDB) with the application's sessions at time_zone %s", (zone, minutes) => {
  let admin: DataSource;
  let zoned: DataSource;
  let store: MysqlJobStore;
  const prefix = uniquePrefix('tz');
  const scratch = `\`${prefix}scratch\``;

  beforeAll(async () => {
    admin = await openMariadbDataSource({ poolSize: 2 });
    zoned = await openZonedDataSource(zone);
    store = new MysqlJobStore({ dataSource: zoned, tablePrefix: prefix, poolSize: 2 });
    await store.migrate();
    await admin.query(`CREATE TABLE ${scratch} (id VARCHAR(36) PRIMARY KEY) ENGINE = InnoDB`);
  });

  afterAll(async () => {
    await store.close();
    await dropInstallation(admin, store.naming);
    await zoned.destroy();
    await admin.destroy();
  });

  /** A job enqueued in a host transaction on a zoned session, and claimed. */
  async function claimed(name: string) {
    const id = await zoned.transaction(async (manager) => {
      expect(await sessionZone(manager)).toEqual({ zone, offset: minutes });
      return (await store.jobEnqueue({ job: { name, payload: { zone }, queue: name }, manager })).id;
    });
    const [job] = await store.jobClaim({ workerId: 'w', limit: 1, queues: [name], leaseMs: LEASE_MS });
    expect(job?.id).toBe(id);
    return job!;
  }

  it(`runs the application's sessions at ${zone}, ${minutes} minutes off the server's UTC clock`, async () => {
    expect(await sessionZone(zoned)).toEqual({ zone, offset: minutes });
  });

  it('writes UTC instants through an enqueue in a host transaction, a claim, a heartbeat and the outcome write in the attempt transaction', async () => {
    const enqueuedAt = Date.now();
    const job = await claimed('tz.lifecycle');
    // Due at once: a run time written in the session's zone would be hours off, and the claim would have found nothing or failed early.
    near(job.runAt, enqueuedAt);
    near(job.createdAt, enqueuedAt);
    near(job.leasedUntil, Date.now() + LEASE_MS);

    const { renewed } = await store.jobHeartbeat({ workerId: 'w', leases: [{ jobId: job.id, attempt: job.attempt }], leaseMs: 2 * LEASE_MS });
    expect(renewed).toHaveLength(1);
    near(renewed[0]!.leasedUntil, Date.now() + 2 * LEASE_MS);

    const attempt = store.beginAttempt();
    expect(await sessionZone(attempt.manager)).toEqual({ zone, offset: minutes });
    await attempt.manager.query(`INSERT INTO ${scratch} (id) VALUES (?)`, [job.id]);
    expect(await attempt.commitSuccess('w', job.id, job.attempt, { done: true })).toEqual({ jobId: job.id, attempt: 1, status: 'applied', state: 'succeeded' });
    const finished = await store.jobGet({ jobId: job.id });
    expect(finished).toMatchObject({ state: 'succeeded', output: { done: true }, leasedUntil: null });
    near(finished!.finishedAt, Date.now());
    near(finished!.updatedAt, Date.now());
    for (const entry of await store.jobHistory({ jobId: job.id })) near(entry.at, Date.now());
    // The columns hold UTC text, whatever zone the session that reads them is at.
    const [raw] = (await zoned.query(`SELECT CAST(run_at AS CHAR) AS runAt, CAST(finished_at AS CHAR) AS finishedAt FROM ${store.naming.jobs} WHERE id = ?`, [job.id])) as { runAt: string; finishedAt: string }[];
    expect(raw).toEqual({ runAt: job.runAt.toISOString().slice(0, 23).replace('T', ' '), finishedAt: finished!.finishedAt!.toISOString().slice(0, 23).replace('T', ' ') });
    expect(await admin.query(`SELECT id FROM ${scratch} WHERE id = ?`, [job.id])).toEqual([{ id: job.id }]);
  });

  it('keeps a runAt given in a host transaction exactly, as UTC', async () => {
    const runAt = new Date(Date.UTC(2031, 6, 1, 12, 34, 56, 789));
    const id = await zoned.transaction(async (manager) => (await store.jobEnqueue({ job: { name: 'tz.later', payload: null, runAt }, manager })).id);
    expect((await store.jobGet({ jobId: id }))?.runAt).toEqual(runAt);
    expect(await zoned.query(`SELECT CAST(run_at AS CHAR) AS runAt FROM ${store.naming.jobs} WHERE id = ?`, [id])).toEqual([{ runAt: '2031-07-01 12:34:56.789' }]);
  });

  it("judges an attempt's lease on the UTC clock: one that lapsed a second ago is refused and its writes rolled back, one live for a minute is applied", async () => {
    const lapsed = await claimed('tz.lapsed');
    const live = await claimed('tz.live');
    await admin.query(`UPDATE ${store.naming.jobs} SET leased_until = UTC_TIMESTAMP(3) - INTERVAL 1 SECOND WHERE id = ?`, [lapsed.id]);

    const late = store.beginAttempt();
    await late.manager.query(`INSERT INTO ${scratch} (id) VALUES (?)`, [lapsed.id]);
    expect(await late.commitSuccess('w', lapsed.id, lapsed.attempt, null)).toEqual({ jobId: lapsed.id, attempt: 1, status: 'stale' });
    expect(await admin.query(`SELECT id FROM ${scratch} WHERE id = ?`, [lapsed.id])).toEqual([]);
    expect(await store.jobGet({ jobId: lapsed.id })).toMatchObject({ state: 'running', attempt: 1 });

    const onTime = store.beginAttempt();
    await onTime.manager.query(`INSERT INTO ${scratch} (id) VALUES (?)`, [live.id]);
    expect(await onTime.commitSuccess('w', live.id, live.attempt, null)).toEqual({ jobId: live.id, attempt: 1, status: 'applied', state: 'succeeded' });
    expect(await admin.query(`SELECT id FROM ${scratch} WHERE id = ?`, [live.id])).toEqual([{ id: live.id }]);
  });
});
