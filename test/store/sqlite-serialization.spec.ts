import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { InvalidArgumentError, StoreBusyError } from '../../lib/core/index.js';
import { SqliteJobStore } from '../../lib/store/index.js';

/** A promise and the function that settles it: a test signal instead of a sleep. */
function signal(): { promise: Promise<void>; fire: () => void } {
  let fire!: () => void;
  const promise = new Promise<void>((resolve) => (fire = resolve));
  return { promise, fire };
}

class Rollback extends Error {}

const dirs: string[] = [];
async function openDataSource(): Promise<DataSource> {
  const dir = mkdtempSync(join(tmpdir(), 'durable-scheduler-gate-'));
  dirs.push(dir);
  const dataSource = await new DataSource({ type: 'better-sqlite3', database: join(dir, 'gate.db') }).initialize();
  await dataSource.query('CREATE TABLE business (name TEXT NOT NULL)');
  return dataSource;
}

async function names(dataSource: DataSource): Promise<string[]> {
  return (await dataSource.query('SELECT name FROM business ORDER BY rowid')).map((r: { name: string }) => r.name);
}

/**
 * Two "transactions" that overlap in time: the first writes, waits for the second to start, and
 * rolls back; the second writes and commits. Run through `begin`, which opens each one.
 */
async function overlap(dataSource: DataSource, begin: <T>(work: () => Promise<T>) => Promise<T>, order: string[]) {
  const firstWrote = signal();
  const secondStarted = signal();
  const first = begin(async () =>
    dataSource.transaction(async (manager) => {
      await manager.query(`INSERT INTO business (name) VALUES ('rolled-back')`);
      order.push('first wrote');
      firstWrote.fire();
      // Give the second transaction every chance to run now, before this one ends.
      await Promise.race([secondStarted.promise, new Promise((r) => setImmediate(r))]);
      for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
      order.push('first rolls back');
      throw new Rollback('first fails');
    }),
  ).catch((error: unknown) => {
    if (!(error instanceof Rollback)) throw error;
  });
  await firstWrote.promise;
  const second = begin(async () =>
    dataSource.transaction(async (manager) => {
      secondStarted.fire();
      order.push('second writes');
      await manager.query(`INSERT INTO business (name) VALUES ('committed')`);
    }),
  );
  await Promise.all([first, second]);
}

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('SQLite: one shared connection per DataSource', () => {
  it('without the gate, a rollback of one TypeORM transaction destroys another one\'s committed row (the trap)', async () => {
    const dataSource = await openDataSource();
    const order: string[] = [];
    await overlap(dataSource, (work) => work(), order);
    // The second "transaction" ran inside the first one (as a savepoint) and died with it.
    expect(order).toEqual(['first wrote', 'second writes', 'first rolls back']);
    expect(await names(dataSource)).toEqual([]);
    await dataSource.destroy();
  });

  it('with the store installed, overlapping transactions take turns and the committed row survives the other rollback', async () => {
    const dataSource = await openDataSource();
    const store = new SqliteJobStore({ dataSource });
    await store.migrate();
    const order: string[] = [];
    await overlap(dataSource, (work) => store.gate.exclusive(work), order);
    expect(order).toEqual(['first wrote', 'first rolls back', 'second writes']);
    expect(await names(dataSource)).toEqual(['committed']);

    // Host transactions that do not go through the gate explicitly are serialized too.
    const hostOrder: string[] = [];
    await dataSource.query('DELETE FROM business');
    await overlap(dataSource, (work) => work(), hostOrder);
    expect(hostOrder).toEqual(['first wrote', 'first rolls back', 'second writes']);
    expect(await names(dataSource)).toEqual(['committed']);
    await dataSource.destroy();
  });

  it('makes a claim wait for an open host transaction instead of running inside it', async () => {
    const dataSource = await openDataSource();
    const store = new SqliteJobStore({ dataSource });
    await store.migrate();
    const enqueued = signal();
    const release = signal();
    const host = dataSource
      .transaction(async (manager) => {
        await store.jobEnqueue({ job: { name: 'tx.job', payload: 1 }, manager });
        enqueued.fire();
        await release.promise;
        throw new Rollback('host rolls back');
      })
      .catch((error: unknown) => {
        if (!(error instanceof Rollback)) throw error;
      });
    await enqueued.promise;
    let claimed: unknown;
    const claim = store.jobClaim({ workerId: 'w', limit: 5, queues: ['default'], leaseMs: 30_000 }).then((jobs) => (claimed = jobs));
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(claimed).toBeUndefined(); // still waiting for the host transaction
    release.fire();
    await host;
    await claim;
    expect(claimed).toEqual([]);
    expect(await store.jobList()).toEqual([]);
    await dataSource.destroy();
  });

  it('lets a scheduler operation inside its own exclusive section run there instead of waiting on itself', async () => {
    const dataSource = await openDataSource();
    const store = new SqliteJobStore({ dataSource });
    await store.migrate();
    const id = await store.gate.exclusive(async () => {
      const { id } = await store.jobEnqueue({ job: { name: 'inside', payload: 1 } });
      expect((await store.jobGet({ jobId: id }))?.state).toBe('scheduled');
      return id;
    });
    expect((await store.jobGet({ jobId: id }))?.name).toBe('inside');
    await dataSource.destroy();
  });

  it('lets a scheduler section open a TypeORM transaction and enqueue through its manager, as an attempt does', async () => {
    const dataSource = await openDataSource();
    const store = new SqliteJobStore({ dataSource });
    await store.migrate();
    const outcome = await store.gate
      .exclusive(() =>
        dataSource.transaction(async (manager) => {
          await manager.query(`INSERT INTO business (name) VALUES ('attempt row')`);
          await store.jobEnqueue({ job: { name: 'follow.up', payload: 1 }, manager });
          throw new Rollback('attempt failed');
        }),
      )
      .catch((e: unknown) => e);
    expect(outcome).toBeInstanceOf(Rollback);
    expect(await names(dataSource)).toEqual([]);
    expect(await store.jobList()).toEqual([]);

    await store.gate.exclusive(() =>
      dataSource.transaction(async (manager) => {
        await manager.query(`INSERT INTO business (name) VALUES ('attempt row')`);
        await store.jobEnqueue({ job: { name: 'follow.up', payload: 2 }, manager });
      }),
    );
    expect(await names(dataSource)).toEqual(['attempt row']);
    expect((await store.jobList()).map((j) => j.payload)).toEqual([2]);
    await dataSource.destroy();
  });

  it('refuses at once, instead of hanging or joining silently, a write awaited inside the caller\'s own transaction', async () => {
    const dataSource = await openDataSource();
    const store = new SqliteJobStore({ dataSource });
    await store.migrate();
    const error = await dataSource
      .transaction(async () => store.jobEnqueue({ job: { name: 'deadlock', payload: 1 } }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toBe(
      "This SQLite DataSource is inside a transaction opened by the calling code; pass that transaction's manager to enqueue, or call the scheduler after the transaction ends.",
    );
    expect(await store.jobList()).toEqual([]);
    await dataSource.destroy();
  });

  it('gives up with StoreBusyError when the connection stays held past the timeout', async () => {
    const dataSource = await openDataSource();
    const store = new SqliteJobStore({ dataSource, busyTimeoutMs: 30 });
    await store.migrate();
    const release = signal();
    const held = store.gate.exclusive(() => release.promise);
    const error = await store.jobEnqueue({ job: { name: 'late', payload: 1 } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreBusyError);
    expect((error as Error).message).toBe('The SQLite connection stayed inside another transaction for 30 ms.');
    release.fire();
    await held;
    await expect(store.jobEnqueue({ job: { name: 'later', payload: 1 } })).resolves.toMatchObject({ created: true });
    await dataSource.destroy();
  });
});

describe('SQLite adapter setup', () => {
  let dataSource: DataSource;
  beforeAll(async () => {
    dataSource = await openDataSource();
  });
  afterAll(async () => {
    await dataSource.destroy();
  });

  it('turns on WAL and creates prefixed tables, and a second migrate is a no-op', async () => {
    const store = new SqliteJobStore({ dataSource, tablePrefix: 'app_' });
    await store.migrate();
    await store.migrate();
    expect(String((await dataSource.query('PRAGMA journal_mode'))[0].journal_mode)).toBe('wal');
    expect(Number((await dataSource.query('PRAGMA busy_timeout'))[0].timeout)).toBeGreaterThanOrEqual(1_000);
    const tables = (await dataSource.query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'app_%' ORDER BY name`)).map(
      (r: { name: string }) => r.name,
    );
    expect(tables).toEqual([
      'app_audit_log',
      'app_concurrency_limits',
      'app_dependencies',
      'app_dependency_cascade',
      'app_dependency_ended',
      'app_installed',
      'app_job_counts',
      'app_job_history',
      'app_jobs',
      'app_maintenance',
      'app_migrations',
      'app_nodes',
      'app_observer_cursors',
      'app_queues',
      'app_rate_limits',
      'app_rate_starts',
      'app_schedules',
      'app_sequences',
    ]);
    expect(await dataSource.query('SELECT version, name FROM app_migrations ORDER BY version')).toEqual([
      { version: 1, name: 'create_jobs' },
      { version: 2, name: 'schedules' },
      { version: 3, name: 'effects' },
      { version: 4, name: 'lease_index' },
      { version: 5, name: 'retired_slots' },
      { version: 6, name: 'history_key' },
      { version: 7, name: 'jobs_fill_factor' },
      { version: 8, name: 'unique_keys_and_retry' },
      { version: 9, name: 'limit_surplus' },
      { version: 10, name: 'paused_queues' },
      { version: 11, name: 'bounded_maintenance' },
      { version: 12, name: 'listing_index_and_counts' },
      { version: 13, name: 'node_registry' },
      { version: 14, name: 'trace_context' },
      { version: 15, name: 'priority' },
      { version: 16, name: 'progress' },
      { version: 17, name: 'rate_limits' },
      { version: 18, name: 'held_back_lanes' },
      { version: 19, name: 'lean_finish' },
      { version: 20, name: 'snoozes' },
      { version: 21, name: 'windows' },
      { version: 22, name: 'sequences' },
      { version: 23, name: 'batches' },
      { version: 24, name: 'groups' },
      { version: 25, name: 'group_listing' },
      { version: 26, name: 'history_lease' },
      { version: 27, name: 'parked_due_apart' },
    ]);
    const indexes = await dataSource.query(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'app_jobs' ORDER BY name`);
    const byName = Object.fromEntries(indexes.map((i: { name: string; sql: string | null }) => [i.name, i.sql]));
    expect(byName.app_jobs_lease_idx).toMatch(/\(leased_until\) WHERE state = 'running'/);
    expect(byName.app_jobs_running_idx).toBeUndefined();
    expect(byName.app_jobs_state_idx).toMatch(/\(state COLLATE NOCASE\)$/);
    expect(byName.app_jobs_finished_idx).toMatch(/\(finished_at\) WHERE state IN \('succeeded', 'cancelled'\)/);
    // A batch's jobs, and the distinct batch ids, read through an index that holds no other job.
    expect(byName.app_jobs_batch_idx).toMatch(/\(batch_id\) WHERE batch_id IS NOT NULL$/);
    // The groups listing reads scheduled grouped jobs alone, by group and run time.
    expect(byName.app_jobs_group_idx).toMatch(/\(group_key, run_at, seq\) WHERE state = 'scheduled' AND group_key IS NOT NULL$/);
    // Parked jobs by run time, under a predicate no claim's conditions imply (migration 0027): the operator reads state it.
    expect(byName.app_jobs_parked_due_idx).toMatch(/\(run_at, seq\) WHERE state = 'scheduled' AND coalesce\(parked_key, ''\) <> ''$/);
    const plan = await dataSource.query(
      `EXPLAIN QUERY PLAN SELECT queue, run_at, seq FROM app_jobs WHERE state = 'scheduled' AND coalesce(parked_key, '') <> '' AND run_at <= 0 ORDER BY run_at, seq LIMIT 5`,
    );
    expect(plan.map((step: { detail: string }) => step.detail)).toEqual([expect.stringContaining('USING INDEX app_jobs_parked_due_idx')]);
    expect(byName.app_jobs_unique_key_idx).toMatch(/^CREATE UNIQUE INDEX .*\(name, unique_key\)\s+WHERE unique_key IS NOT NULL AND state IN \('scheduled', 'awaiting_parents', 'running'\)$/);
    // Claims read the paused queues alone, through an index that holds nothing else.
    const queues = await dataSource.query(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'app_queues' AND sql IS NOT NULL ORDER BY name`);
    expect(queues).toEqual([{ name: 'app_queues_paused_idx', sql: expect.stringMatching(/\(name\) WHERE paused = 1$/) }]);
  });

  it.each(["x; drop table y", 'a"b', "o'brien", 'a\nb', 'p'.repeat(64), 'UPPER_'])('refuses the table prefix %j before any SQL runs', async (prefix) => {
    const before = await dataSource.query(`SELECT name FROM sqlite_master ORDER BY name`);
    expect(() => new SqliteJobStore({ dataSource, tablePrefix: prefix })).toThrow(/tablePrefix/);
    expect(await dataSource.query(`SELECT name FROM sqlite_master ORDER BY name`)).toEqual(before);
  });

  it('refuses a DataSource of another type, or one not yet initialized', async () => {
    const pgLike = { options: { type: 'postgres' }, isInitialized: true } as unknown as DataSource;
    expect(() => new SqliteJobStore({ dataSource: pgLike })).toThrow('SqliteJobStore needs a TypeORM DataSource of type "better-sqlite3".');
    const fresh = new DataSource({ type: 'better-sqlite3', database: ':memory:' });
    expect(() => new SqliteJobStore({ dataSource: fresh })).toThrow(/initialized DataSource/);
    expect(() => new SqliteJobStore({ dataSource, busyTimeoutMs: 0 })).toThrow(/busyTimeoutMs/);
  });
});
