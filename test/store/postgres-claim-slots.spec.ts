import { describe, expect, it } from '@jest/globals';
import { LATEST_SCHEMA_VERSION, PostgresJobStore } from '../../lib/store/index.js';
import { dataSource, freshStore, stores, useAdapterDataSource } from '../support/postgres-adapter.js';
import { claimScans } from '../support/postgres-plans.js';

useAdapterDataSource();

describe('PostgreSQL concurrency slots', () => {
  const claimLimited = (store: PostgresJobStore, workerId: string) => store.jobClaim({ workerId, limit: 50, queues: ['default'], leaseMs: 60_000 });
  const slotsOf = async (store: PostgresJobStore, key: string) =>
    (await dataSource.query(
      `SELECT slot, job_id IS NOT NULL AS held, held_until = 'infinity' AS retired FROM ${store.naming.slots} WHERE key = $1 ORDER BY slot`,
      [key],
    )) as Array<{ slot: number; held: boolean; retired: boolean }>;

  it('issue 19 item 2: keeps the slot of every running job when a limit is lowered, as surplus that its finishing jobs give back', async () => {
    const store = freshStore();
    await store.migrate();
    await store.concurrencyLimitSet({ target: { key: 'k' }, max: 3 });
    for (let i = 0; i < 5; i++) await store.jobEnqueue({ job: { name: 'slot', payload: i, concurrencyKey: 'k' } });
    const running = await claimLimited(store, 'w1');
    expect(running).toHaveLength(3);
    const surplus = async () =>
      ((await dataSource.query(`SELECT surplus FROM ${store.naming.limits} WHERE key = 'key:k'`)) as Array<{ surplus: number }>)[0]!.surplus;
    await store.concurrencyLimitSet({ target: { key: 'k' }, max: 1 });
    expect(await slotsOf(store, 'key:k')).toEqual([
      { slot: 1, held: true, retired: false },
      { slot: 2, held: true, retired: false },
      { slot: 3, held: true, retired: false },
    ]);
    expect(await surplus()).toBe(2);
    // A heartbeat renews every slot with its job's lease.
    const beat = await store.jobHeartbeat({ workerId: 'w1', leases: running.map((j) => ({ jobId: j.id, attempt: j.attempt })), leaseMs: 90_000 });
    expect(beat.lost).toEqual([]);
    const leases = await dataSource.query(
      `SELECT bool_and(s.held_until = j.leased_until) AS same, count(*)::int AS n FROM ${store.naming.slots} s JOIN ${store.naming.jobs} j ON j.id = s.job_id WHERE s.key = 'key:k'`,
    );
    expect(leases).toEqual([{ same: true, n: 3 }]);
    // The first job finishing takes its row away: two rows remain for two jobs, one beyond the max.
    const [first, second] = running;
    await store.jobCompleteMany({ workerId: 'w1', outcomes: [{ jobId: first!.id, attempt: first!.attempt, kind: 'succeeded' }] });
    expect((await slotsOf(store, 'key:k')).map((s) => s.slot)).toEqual([2, 3]);
    expect(await surplus()).toBe(1);
    await store.concurrencyLimitSet({ target: { key: 'k' }, max: 2 });
    expect(await surplus()).toBe(0);
    expect(await claimLimited(store, 'w2')).toEqual([]);
    // With no surplus left, a job that finishes frees its row for the next claim.
    await store.jobCompleteMany({ workerId: 'w1', outcomes: [{ jobId: second!.id, attempt: second!.attempt, kind: 'succeeded' }] });
    expect(await slotsOf(store, 'key:k')).toEqual([
      { slot: 2, held: false, retired: false },
      { slot: 3, held: true, retired: false },
    ]);
    expect(await claimLimited(store, 'w2')).toHaveLength(1);
  });

  it('retires, when migrating to version 5, the slots an earlier version kept above a lowered limit', async () => {
    const store = freshStore();
    await store.migrate();
    await store.concurrencyLimitSet({ target: { key: 'k' }, max: 3 });
    for (let i = 0; i < 3; i++) await store.jobEnqueue({ job: { name: 'slot', payload: i, concurrencyKey: 'k' } });
    expect(await claimLimited(store, 'w1')).toHaveLength(3);
    // What version 4 left after lowering the limit to 1 while three jobs ran: slots 2 and 3 still
    // held with live leases, and a free slot 4 from an older, larger limit.
    const { slots, limits, migrations } = store.naming;
    await dataSource.query(`UPDATE ${limits} SET max = 1 WHERE key = 'key:k'`);
    await dataSource.query(`UPDATE ${slots} SET held_until = now() + interval '1 minute' WHERE key = 'key:k' AND slot > 1`);
    await dataSource.query(`INSERT INTO ${slots} (key, slot) VALUES ('key:k', 4)`);
    await dataSource.query(`DELETE FROM ${migrations} WHERE version = 5`);
    const again = new PostgresJobStore({ dataSource, schema: store.naming.schema });
    stores.push(again);
    await again.migrate();
    expect(await slotsOf(store, 'key:k')).toEqual([
      { slot: 1, held: true, retired: false },
      { slot: 2, held: true, retired: true },
      { slot: 3, held: true, retired: true },
    ]);
    expect(await again.schemaVersion()).toBe(LATEST_SCHEMA_VERSION);
  });

  it('finds a free slot through the free-slot index, never by scanning the key, even on tables never analyzed', async () => {
    const texts: string[] = [];
    const store = freshStore({ onStatement: (text) => texts.push(text) });
    await store.migrate();
    for (const table of [store.naming.jobs, store.naming.slots, store.naming.limits]) await dataSource.query(`ALTER TABLE ${table} SET (autovacuum_enabled = false)`);
    await store.concurrencyLimitSet({ target: { queue: 'default' }, max: 2_000 });
    for (let i = 0; i < 2; i++) await store.jobEnqueueMany({ jobs: Array.from({ length: 1_000 }, (_, j) => ({ name: 'slot', payload: i * 1_000 + j })) });
    expect(await claimLimited(store, 'w1')).toHaveLength(50);
    const full = texts.find((text) => text.includes('wanted AS'));
    expect(full).toBeDefined();
    const scans = await claimScans(full!, store.naming.slots, 50);
    // The saturation probe and the slot search of the claim both read the free-slot index.
    const free = scans.filter((scan) => scan.index === 'concurrency_slots_free_idx');
    expect(free.length).toBeGreaterThanOrEqual(2);
    expect(free.every((scan) => scan.type === 'Index Scan' || scan.type === 'Index Only Scan')).toBe(true);
    expect(scans.filter((scan) => scan.type.startsWith('Bitmap'))).toEqual([]);
  });
});
