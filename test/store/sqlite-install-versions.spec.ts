import { afterAll, describe, expect, it } from '@jest/globals';
import type { Database } from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DataSource } from 'typeorm';
import { IncompatibleSchemaError } from '../../lib/core/index.js';
import { SqliteJobStore } from '../../lib/store/index.js';
import type { SqlInstall } from '../../lib/store/sql-install.js';
import { loadMigrations } from '../../lib/store/sql-migrations.js';
import { sqliteInstall } from '../../lib/store/sqlite/sqlite-install.js';
import { migrateSqlite } from '../../lib/store/sqlite/sqlite-migrator.js';
import { sqliteNaming } from '../../lib/store/sqlite/sqlite-naming.js';

// Version N is this code's install under a version one higher than the one it ships with; version
// N−1 knows one migration fewer (no rate limits) and installs older triggers: no history and no
// job counts. An N−1 process that installed them would leave history and counts behind.

const MIGRATIONS = loadMigrations(fileURLToPath(new URL('../../lib/store/sqlite/migrations/', import.meta.url)));
const dir = mkdtempSync(join(tmpdir(), 'durable-scheduler-install-'));
const sources: DataSource[] = [];
let files = 0;

afterAll(async () => {
  await Promise.all(sources.map((source) => source.destroy()));
  rmSync(dir, { recursive: true, force: true });
});

async function freshFile(): Promise<{ dataSource: DataSource; db: Database }> {
  const dataSource = await new DataSource({ type: 'better-sqlite3', database: join(dir, `install-${++files}.db`) }).initialize();
  sources.push(dataSource);
  return { dataSource, db: (dataSource.driver as unknown as { databaseConnection: Database }).databaseConnection };
}

const naming = sqliteNaming();

function versions(db: Database, { compatibleFrom }: { compatibleFrom: 'N' | 'N-1' }) {
  const current = sqliteInstall(naming, 'transitions_and_errors');
  const n: SqlInstall = { ...current, version: current.version + 1, compatibleFrom: compatibleFrom === 'N' ? current.version + 1 : current.version };
  const drop = ['jobs_history_insert', 'jobs_history_update', 'jobs_count_insert', 'jobs_count_update', 'jobs_count_delete'];
  const older: SqlInstall = { version: current.version, compatibleFrom: current.version, sql: drop.map((t) => `DROP TRIGGER IF EXISTS ${naming.local(t)};`).join('\n') };
  return {
    bootN: () => migrateSqlite(db, naming, n, MIGRATIONS),
    bootOlder: () => migrateSqlite(db, naming, older, MIGRATIONS.slice(0, -1)),
  };
}

/** Every table, index and trigger, with what the file records of its schema and install. */
function installed(db: Database) {
  return {
    objects: db.prepare(`SELECT type, name, sql FROM sqlite_master ORDER BY type, name`).all(),
    migrations: db.prepare(`SELECT version, applied_at FROM ${naming.migrations} ORDER BY version`).all(),
    install: db.prepare(`SELECT version, compatible_from, installed_at FROM ${naming.installed}`).all(),
  };
}

/** Whether a job's enqueue and claim are written to its history and counted, as N's triggers do. */
async function effectsApplied(dataSource: DataSource): Promise<boolean> {
  const store = new SqliteJobStore({ dataSource });
  const { id } = await store.jobEnqueue({ job: { name: 'call', payload: 1 } });
  await store.jobClaim({ workerId: 'w', limit: 1, queues: ['default'], leaseMs: 60_000 });
  const history = await store.jobHistory({ jobId: id });
  const counts = (await store.queueList()).find((queue) => queue.name === 'default')?.counts;
  return history.length === 2 && counts?.running === 1;
}

describe('issue 35 item 3: a rolling deploy never installs triggers older than the schema (SQLite)', () => {
  it('issue 35 item 3: a process of version N−1 opening a file of version N changes nothing, and runs with N’s triggers', async () => {
    const { dataSource, db } = await freshFile();
    const { bootN, bootOlder } = versions(db, { compatibleFrom: 'N-1' });
    expect(bootN()).toEqual(MIGRATIONS.map((m) => m.version));
    const before = installed(db);
    expect(bootOlder()).toEqual([]);
    expect(installed(db)).toEqual(before);
    expect(await effectsApplied(dataSource)).toBe(true);
  });

  it('issue 35 item 3: a process of version N−1 refuses, in one sentence and writing nothing, a file of version N that rules it out', async () => {
    const { dataSource, db } = await freshFile();
    const { bootN, bootOlder } = versions(db, { compatibleFrom: 'N' });
    bootN();
    const before = installed(db);
    let refusal: unknown;
    try {
      bootOlder();
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(IncompatibleSchemaError);
    expect((refusal as Error).message).toMatch(/^The scheduler tables at prefix durable_scheduler_ were installed by a newer version .*; upgrade this node\.$/);
    // The store this code ships refuses the same way through its public migrate.
    await expect(new SqliteJobStore({ dataSource }).migrate()).rejects.toBeInstanceOf(IncompatibleSchemaError);
    expect(installed(db)).toEqual(before);
  });

  it.each([
    ['N−1 first', ['older', 'N']],
    ['N first', ['N', 'older']],
  ] as const)('issue 35 item 3: processes of versions N and N−1 opening one file together leave N installed (%s)', async (_order, order) => {
    // SQLite's write lock makes them take turns, so together is one after the other, in either order.
    const { dataSource, db } = await freshFile();
    const { bootN, bootOlder } = versions(db, { compatibleFrom: 'N-1' });
    for (const which of order) (which === 'N' ? bootN : bootOlder)();
    const raced = installed(db);
    expect(raced.install).toEqual([expect.objectContaining({ version: sqliteInstall(naming, 'off').version + 1 })]);
    expect(raced.migrations).toHaveLength(MIGRATIONS.length);
    bootN();
    expect(installed(db).objects).toEqual(raced.objects);
    expect(await effectsApplied(dataSource)).toBe(true);
  });
});
