import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import type { JobRecord } from '../../lib/core/index.js';
import { PostgresJobStore } from '../../lib/store/index.js';
import { limitsLockId } from '../../lib/store/postgres/postgres-limits.js';
import { limitsLockWaiters, until } from '../support/limits-lock.js';
import { tracked, untilWaiting } from '../support/lock-waits.js';
import { databaseUrl, dropSchemas, openPostgresDataSource, uniqueSchema } from '../support/postgres.js';

// Issue 19 item 2 on PostgreSQL: a limit change racing claims, heartbeats and outcome writes. Each
// test forces one interleaving: a separate connection holds a lock the store takes (the limits
// lock, or the audit log a limit change writes last), the racing calls are started, the test waits
// until PostgreSQL shows each of them waiting on that lock (pg_locks), and then lets go.

const LEASE_MS = 60_000;
let admin: DataSource;
let other: DataSource;
const schemas: string[] = [];
const stores: PostgresJobStore[] = [];
const clients: pg.Client[] = [];

beforeAll(async () => {
  admin = await openPostgresDataSource(6);
  other = await openPostgresDataSource(4);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.end()));
  await Promise.all(stores.map((s) => s.close()));
  await dropSchemas(admin, schemas);
  await Promise.all([admin.destroy(), other.destroy()]);
});

/** A migrated store, and a second one on the same schema with a pool of its own (another node). */
async function twoNodes(): Promise<[PostgresJobStore, PostgresJobStore]> {
  const schema = uniqueSchema('limchg');
  schemas.push(schema);
  const a = new PostgresJobStore({ dataSource: admin, schema });
  const b = new PostgresJobStore({ dataSource: other, schema });
  stores.push(a, b);
  await a.migrate();
  return [a, b];
}

async function connection(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: databaseUrl() });
  await client.connect();
  clients.push(client);
  return client;
}

/** How many backends wait for a lock on `table`. */
async function tableLockWaiters(table: string): Promise<number> {
  const [row] = await admin.query(`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'relation' AND NOT granted AND relation = $1::regclass`, [table]);
  return row.n as number;
}

const claim = (store: PostgresJobStore, workerId: string, limit = 10, leaseMs = LEASE_MS) =>
  store.jobClaim({ workerId, limit, queues: ['default'], leaseMs });
const finish = (store: PostgresJobStore, job: JobRecord) =>
  store.jobCompleteMany({ workerId: job.workerId!, outcomes: [{ jobId: job.id, attempt: job.attempt, kind: 'succeeded' }] });

describe('issue 19 item 2: PostgreSQL limit changes racing claims, heartbeats and outcomes', () => {
  it('a claim whose snapshot predates a limit set while it waited counts the limit, not what its snapshot saw', async () => {
    const [store, node] = await twoNodes();
    await store.jobEnqueueMany({ jobs: Array.from({ length: 4 }, (_, i) => ({ name: 'race', payload: i })) });
    expect(await claim(store, 'w1', 1)).toHaveLength(1);
    const holder = await connection();
    await holder.query(`SELECT pg_advisory_lock(${limitsLockId(store.naming)})`);
    // The limit change queues for the lock first, then the claim behind it: once let go, the
    // limit commits before the claim reads anything, though the claim's statement began earlier.
    const change = store.concurrencyLimitSet({ target: { queue: 'default' }, max: 1 });
    await until(async () => (await limitsLockWaiters(admin, store)) === 1, [change]);
    const racing = claim(node, 'w2', 2);
    await until(async () => (await limitsLockWaiters(admin, store)) === 2, [racing]);
    await holder.query(`SELECT pg_advisory_unlock(${limitsLockId(store.naming)})`);
    await change;
    expect(await racing).toEqual([]);
    expect(await claim(node, 'w3')).toEqual([]);
  });

  it('a claim that takes the lock before a limit change is counted by the change when it commits', async () => {
    const [store, node] = await twoNodes();
    await store.jobEnqueueMany({ jobs: Array.from({ length: 4 }, (_, i) => ({ name: 'race', payload: i })) });
    const [first] = await claim(store, 'w1', 1);
    const holder = await connection();
    await holder.query(`SELECT pg_advisory_lock(${limitsLockId(store.naming)})`);
    // This time the claim queues first: it runs before the limit exists and must be counted by it.
    const racing = claim(node, 'w2', 1);
    await until(async () => (await limitsLockWaiters(admin, store)) === 1, [racing]);
    const change = store.concurrencyLimitSet({ target: { queue: 'default' }, max: 1 });
    await until(async () => (await limitsLockWaiters(admin, store)) === 2, [change]);
    await holder.query(`SELECT pg_advisory_unlock(${limitsLockId(store.naming)})`);
    const [second] = await racing;
    await change;
    expect(second).toBeDefined();
    // Two run under a cap of one: nothing starts until both have finished.
    expect(await claim(node, 'w3')).toEqual([]);
    await finish(store, first!);
    expect(await claim(node, 'w3')).toEqual([]);
    await finish(node, second!);
    expect(await claim(node, 'w3')).toHaveLength(1);
  });

  it('a heartbeat that renews a job while a limit is being set renews the slot the limit gave that job', async () => {
    const [store, node] = await twoNodes();
    await store.jobEnqueueMany({ jobs: Array.from({ length: 3 }, (_, i) => ({ name: 'race', payload: i })) });
    const [job] = await claim(store, 'w1', 1, 1_000);
    // The limit change provisions the slot, then waits to write its audit entry; meanwhile the
    // heartbeat renews the job, and its statement began before the slot was committed.
    const holder = await connection();
    await holder.query('BEGIN');
    await holder.query(`LOCK TABLE ${store.naming.audit} IN EXCLUSIVE MODE`);
    const change = store.concurrencyLimitSet({ target: { queue: 'default' }, max: 1 });
    await until(async () => (await tableLockWaiters(store.naming.audit)) === 1, [change]);
    const beat = node.jobHeartbeat({ workerId: 'w1', leases: [{ jobId: job!.id, attempt: job!.attempt }], leaseMs: LEASE_MS });
    await until(async () => (await limitsLockWaiters(admin, store)) === 1, [beat]);
    await holder.query('COMMIT');
    await change;
    expect((await beat).lost).toEqual([]);
    const [slot] = await admin.query(
      `SELECT s.held_until = j.leased_until AS same FROM ${store.naming.slots} s JOIN ${store.naming.jobs} j ON j.id = s.job_id WHERE s.key = 'queue:default'`,
    );
    expect(slot).toEqual({ same: true });
    // Past the lease the job had when the limit was set, within the renewed one: still counted.
    await admin.query(`UPDATE ${store.naming.jobs} SET leased_until = leased_until - interval '2 seconds'`);
    await admin.query(`UPDATE ${store.naming.slots} SET held_until = held_until - interval '2 seconds'`);
    expect(await claim(node, 'w2')).toEqual([]);
  });

  it('an outcome written while a lowering waits to commit gives its slot back against the lowered limit', async () => {
    const [store, node] = await twoNodes();
    await store.concurrencyLimitSet({ target: { queue: 'default' }, max: 3 });
    await store.jobEnqueueMany({ jobs: Array.from({ length: 5 }, (_, i) => ({ name: 'race', payload: i })) });
    const running = await claim(store, 'w1');
    expect(running).toHaveLength(3);
    const holder = await connection();
    await holder.query('BEGIN');
    await holder.query(`LOCK TABLE ${store.naming.audit} IN EXCLUSIVE MODE`);
    const change = store.concurrencyLimitSet({ target: { queue: 'default' }, max: 1 });
    await until(async () => (await tableLockWaiters(store.naming.audit)) === 1, [change]);
    const outcome = finish(node, running[0]!);
    await until(async () => (await limitsLockWaiters(admin, store)) === 1, [outcome]);
    await holder.query('COMMIT');
    await change;
    expect((await outcome)[0]).toMatchObject({ status: 'applied' });
    // Two still run against the lowered cap of one.
    expect(await claim(node, 'w2')).toEqual([]);
    await finish(store, running[1]!);
    expect(await claim(node, 'w2')).toEqual([]);
    await finish(store, running[2]!);
    expect(await claim(node, 'w2')).toHaveLength(1);
    expect(await claim(node, 'w3')).toEqual([]);
  });
});

// A heartbeat reads the clock when its transaction begins; a claim, when its statement runs. At a
// lease's deadline the two can judge the same lease differently, and the slot row decides: the
// claim that holds it and finds it lapsed gives it away, and the heartbeat that began a moment
// before the deadline must then not renew the job's lease, or two jobs run under a cap of one.
// The claim's side is played by a connection of the test's own, which locks the slot as a claim's
// FOR UPDATE SKIP LOCKED does and writes what a claim's `taken` step writes to it: no real claim can
// be stopped between the two, and no heartbeat can be stopped after its clock and before the slot
// except by a lock on the slot itself.
describe('a heartbeat and a claim meeting at a lease deadline (PostgreSQL)', () => {
  const heartbeatText = 'FOR NO KEY UPDATE OF j SKIP LOCKED';

  async function capped() {
    const [store] = await twoNodes();
    await store.concurrencyLimitSet({ target: { key: 'k' }, max: 1 });
    await store.jobEnqueueMany({ jobs: [0, 1].map((i) => ({ name: 'race', payload: i, concurrencyKey: 'k' })) });
    const [running] = await claim(store, 'w1', 1);
    const [{ id: waiting }] = await admin.query(`SELECT id FROM ${store.naming.jobs} WHERE state = 'scheduled'`);
    // The lease, on the job and its slot alike, ends 1.5 s from now by the server's clock (to the
    // millisecond, which a JavaScript Date holds exactly).
    await admin.query(
      `UPDATE ${store.naming.jobs} SET leased_until = date_trunc('milliseconds', clock_timestamp() + interval '1500 milliseconds') WHERE id = $1`,
      [running!.id],
    );
    await admin.query(`UPDATE ${store.naming.slots} s SET held_until = j.leased_until FROM ${store.naming.jobs} j WHERE s.job_id = j.id AND j.id = $1`, [running!.id]);
    const [{ deadline }] = await admin.query(`SELECT leased_until AS deadline FROM ${store.naming.jobs} WHERE id = $1`, [running!.id]);
    return { store, running: running!, waiting: waiting as string, deadline: deadline as Date };
  }

  async function pastDeadline(deadline: Date): Promise<void> {
    for (;;) {
      const [{ past }] = await admin.query('SELECT clock_timestamp() > $1 AS past', [deadline]);
      if (past) return;
    }
  }

  it('a heartbeat that began before the deadline does not renew a job whose slot a claim took after it: the job is lost', async () => {
    const { store, running, waiting, deadline } = await capped();
    const claimer = await connection();
    await claimer.query('BEGIN');
    await claimer.query(`SELECT 1 FROM ${store.naming.slots} WHERE job_id = $1 FOR UPDATE`, [running.id]);
    const beat = tracked(store.jobHeartbeat({ workerId: 'w1', leases: [{ jobId: running.id, attempt: running.attempt }], leaseMs: LEASE_MS }));
    expect(await untilWaiting(admin, heartbeatText, beat.isDone)).toBe(true);
    const [{ early }] = await admin.query(
      `SELECT bool_and(xact_start < $1) AS early FROM pg_stat_activity
       WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock' AND position($2 in query) > 0`,
      [deadline, heartbeatText],
    );
    expect(early).toBe(true);
    await pastDeadline(deadline);
    const taken = await claimer.query(
      `UPDATE ${store.naming.slots} SET job_id = $1, held_until = statement_timestamp() + interval '60 seconds' WHERE job_id = $2 AND held_until <= statement_timestamp()`,
      [waiting, running.id],
    );
    expect(taken.rowCount).toBe(1);
    await claimer.query('COMMIT');
    const result = await beat.promise;
    expect(result.renewed).toEqual([]);
    expect(result.lost).toEqual([{ jobId: running.id, attempt: running.attempt }]);
    const [job] = await admin.query(`SELECT leased_until FROM ${store.naming.jobs} WHERE id = $1`, [running.id]);
    expect(job.leased_until).toEqual(deadline);
  });

  it('under a queue cap and a key cap, a job whose key slot a claim took keeps neither slot: its queue slot is not renewed either', async () => {
    const { store, running, waiting, deadline } = await capped();
    await store.concurrencyLimitSet({ target: { queue: 'default' }, max: 1 });
    await admin.query(`UPDATE ${store.naming.slots} SET held_until = $1 WHERE job_id = $2`, [deadline, running.id]);
    const claimer = await connection();
    await claimer.query('BEGIN');
    await claimer.query(`SELECT 1 FROM ${store.naming.slots} WHERE job_id = $1 AND key = 'key:k' FOR UPDATE`, [running.id]);
    const beat = tracked(store.jobHeartbeat({ workerId: 'w1', leases: [{ jobId: running.id, attempt: running.attempt }], leaseMs: LEASE_MS }));
    expect(await untilWaiting(admin, heartbeatText, beat.isDone)).toBe(true);
    await pastDeadline(deadline);
    await claimer.query(`UPDATE ${store.naming.slots} SET job_id = $1, held_until = statement_timestamp() + interval '60 seconds' WHERE job_id = $2 AND key = 'key:k'`, [
      waiting,
      running.id,
    ]);
    await claimer.query('COMMIT');
    expect((await beat.promise).lost).toEqual([{ jobId: running.id, attempt: running.attempt }]);
    const slots = await admin.query(`SELECT key, held_until FROM ${store.naming.slots} WHERE job_id = $1`, [running.id]);
    expect(slots).toEqual([{ key: 'queue:default', held_until: deadline }]);
  });

  it('a claim empties every lapsed slot it counted free and did not give to a pick, so no late heartbeat can renew it under a surplus', async () => {
    const [store] = await twoNodes();
    await store.concurrencyLimitSet({ target: { key: 'k' }, max: 3 });
    await store.jobEnqueueMany({ jobs: [0, 1, 2].map((i) => ({ name: 'race', payload: i, queue: 'a', concurrencyKey: 'k' })) });
    const three = await store.jobClaim({ workerId: 'w1', limit: 3, queues: ['a'], leaseMs: LEASE_MS });
    expect(three).toHaveLength(3);
    // Lowered to 2 while 3 run: the third held slot is the surplus.
    await store.concurrencyLimitSet({ target: { key: 'k' }, max: 2 });
    const [{ surplus }] = await admin.query(`SELECT surplus FROM ${store.naming.limits} WHERE key = 'key:k'`);
    expect(surplus).toBe(1);
    // Two of them lapse: one long ago, one a moment ago. The third still runs.
    const [old, recent, live] = three;
    for (const [job, ago] of [[old!, '1 hour'], [recent!, '1 millisecond']] as const) {
      await admin.query(`UPDATE ${store.naming.jobs} SET leased_until = now() - $2::interval WHERE id = $1`, [job.id, ago]);
      await admin.query(`UPDATE ${store.naming.slots} SET held_until = now() - $2::interval WHERE job_id = $1`, [job.id, ago]);
    }
    await store.jobEnqueueMany({ jobs: [{ name: 'race', payload: 3, queue: 'b', concurrencyKey: 'k' }] });
    // Room is the two lapsed slots less the surplus: one job starts, and both lapsed slots are spent.
    const [started] = await store.jobClaim({ workerId: 'w2', limit: 1, queues: ['b'], leaseMs: LEASE_MS });
    expect(started).toBeDefined();
    const slots = await admin.query(`SELECT job_id, held_until > now() AS live FROM ${store.naming.slots} WHERE key = 'key:k' ORDER BY slot`);
    expect(slots.filter((s: { job_id: string | null }) => s.job_id === old!.id || s.job_id === recent!.id)).toEqual([]);
    expect(slots.filter((s: { live: boolean }) => s.live).map((s: { job_id: string }) => s.job_id).sort()).toEqual([live!.id, started!.id].sort());
    // A heartbeat of the job that lapsed a moment ago renews nothing.
    expect((await store.jobHeartbeat({ workerId: 'w1', leases: [{ jobId: recent!.id, attempt: recent!.attempt }], leaseMs: LEASE_MS })).lost).toHaveLength(1);
    await store.jobEnqueueMany({ jobs: [{ name: 'race', payload: 4, queue: 'b', concurrencyKey: 'k' }] });
    expect(await store.jobClaim({ workerId: 'w2', limit: 1, queues: ['b'], leaseMs: LEASE_MS })).toEqual([]);
  });

  it('a heartbeat that reaches the slot before any claim renews the slot and the lease together, and the claim then finds no room', async () => {
    const { store, running, deadline } = await capped();
    const result = await store.jobHeartbeat({ workerId: 'w1', leases: [{ jobId: running.id, attempt: running.attempt }], leaseMs: LEASE_MS });
    expect(result.lost).toEqual([]);
    expect(result.renewed.map((r) => r.jobId)).toEqual([running.id]);
    const [row] = await admin.query(
      `SELECT s.held_until = j.leased_until AS same, j.leased_until > $2 AS later FROM ${store.naming.slots} s JOIN ${store.naming.jobs} j ON j.id = s.job_id WHERE j.id = $1`,
      [running.id, deadline],
    );
    expect(row).toEqual({ same: true, later: true });
    await pastDeadline(deadline);
    expect(await claim(store, 'w2')).toEqual([]);
  });

  it('a heartbeat renews a job under a limit declared at enqueue and not yet given slots', async () => {
    const [store] = await twoNodes();
    await store.jobEnqueueMany({ jobs: [{ name: 'race', payload: 0, concurrencyKey: 'd' }] });
    const [running] = await claim(store, 'w1', 1);
    await store.jobEnqueueMany({ jobs: [{ name: 'race', payload: 1, concurrencyKey: 'd', concurrencyLimit: 1 }] });
    const [limit] = await admin.query(`SELECT pending FROM ${store.naming.limits} WHERE key = 'key:d'`);
    expect(limit).toEqual({ pending: true });
    const result = await store.jobHeartbeat({ workerId: 'w1', leases: [{ jobId: running!.id, attempt: running!.attempt }], leaseMs: LEASE_MS });
    expect(result.lost).toEqual([]);
    expect(result.renewed.map((r) => r.jobId)).toEqual([running!.id]);
  });
});

describe('issue 19 item 2: migrating to version 9', () => {
  it('turns retired slots into held ones and gives a slot to each job that ran under a limit without one', async () => {
    const [store, node] = await twoNodes();
    await store.jobEnqueueMany({ jobs: Array.from({ length: 4 }, (_, i) => ({ name: 'old', payload: i, concurrencyKey: 'k' })) });
    const running = await claim(store, 'w1', 3);
    expect(running).toHaveLength(3);
    const [a, b, c] = running.map((job) => job.id);
    // What version 8 left: a key limit lowered from 3 to 1 while three ran (slot 1 held by a, slot
    // 2 retired and held by b, slot 3 retired and let go; c's slot was never there, as when the
    // limit was set while c ran), and a queue limit of 2 set while all three ran, with free slots.
    const { limits, slots, migrations } = store.naming;
    await admin.query(`ALTER TABLE ${limits} DROP COLUMN surplus, DROP COLUMN pending`);
    await admin.query(`DELETE FROM ${migrations} WHERE version = 9`);
    await admin.query(`INSERT INTO ${limits} (key, max) VALUES ('key:k', 1), ('queue:default', 2)`);
    await admin.query(
      `INSERT INTO ${slots} (key, slot, job_id, held_until) VALUES
         ('key:k', 1, $1, (SELECT leased_until FROM ${store.naming.jobs} WHERE id = $1)), ('key:k', 2, $2, 'infinity'), ('key:k', 3, NULL, 'infinity'),
         ('queue:default', 1, NULL, '-infinity'), ('queue:default', 2, NULL, '-infinity')`,
      [a, b],
    );
    await store.migrate();
    const rows = await admin.query(
      `SELECT s.key, count(*)::int AS slots, count(s.job_id)::int AS held, bool_and(s.job_id IS NULL OR s.held_until = j.leased_until) AS leases,
              (SELECT surplus FROM ${limits} l WHERE l.key = s.key) AS surplus
       FROM ${slots} s LEFT JOIN ${store.naming.jobs} j ON j.id = s.job_id GROUP BY s.key ORDER BY s.key`,
    );
    expect(rows).toEqual([
      { key: 'key:k', slots: 3, held: 3, leases: true, surplus: 2 },
      { key: 'queue:default', slots: 5, held: 3, leases: true, surplus: 3 },
    ]);
    // The three count against both caps: the fourth job waits until all three have finished.
    expect(await claim(node, 'w2')).toEqual([]);
    for (const job of running.slice(0, 2)) await finish(store, job);
    expect(await claim(node, 'w2')).toEqual([]);
    await finish(store, running[2]!);
    expect((await claim(node, 'w2')).map((job) => job.id)).not.toContain(c);
    expect(await claim(node, 'w3')).toEqual([]);
  });
});
