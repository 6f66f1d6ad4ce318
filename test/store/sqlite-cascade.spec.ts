import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import type { EnqueueInput } from '../../lib/store/index.js';
import { SqliteJobStore } from '../../lib/store/index.js';

const id = (n: number) => `0190a5a3-0000-7000-8000-${String(n).padStart(12, '0')}`;
const dirs: string[] = [];
const dataSources: DataSource[] = [];

afterAll(async () => {
  for (const dataSource of dataSources) await dataSource.destroy();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function openStore(recursiveTriggers: 'ON' | 'OFF') {
  const dir = mkdtempSync(join(tmpdir(), 'durable-scheduler-cascade-'));
  dirs.push(dir);
  const dataSource = await new DataSource({ type: 'better-sqlite3', database: join(dir, 'cascade.db') }).initialize();
  dataSources.push(dataSource);
  const store = new SqliteJobStore({ dataSource });
  await store.migrate();
  // The application's own setting of the shared connection, made after the store migrated.
  await dataSource.query(`PRAGMA recursive_triggers = ${recursiveTriggers}`);
  return { store, dataSource };
}

/**
 * Issue 19: the settle trigger settles a whole cascade in one pass. The connection is shared with
 * the application, so the result must not depend on whether triggers may fire themselves: with
 * recursive_triggers on, each job the pass cancels fires the trigger again, and that firing must
 * find nothing left to settle (no second lowering of a latch, no recursion as deep as the chain).
 */
describe('SQLite dependency cascade and recursive_triggers', () => {
  it.each(['ON', 'OFF'] as const)('with recursive_triggers %s, a chain of 2,000 is cancelled once, each latch lowered once', async (pragma) => {
    const { store, dataSource } = await openStore(pragma);
    const length = 2_000;
    const open = id(900_000);
    const tolerant = id(900_001);
    const jobs: EnqueueInput[] = [{ id: open, name: 'open', payload: 0, delayMs: 3_600_000 }];
    for (let i = 0; i <= length; i++) jobs.push({ id: id(i), name: 'chain', payload: i, ...(i === 0 ? { maxAttempts: 1 } : { dependsOn: [id(i - 1)] }) });
    // Two parents in the cascade and one that never finishes: the cascade lowers it by two, to one.
    jobs.push({ id: tolerant, name: 'tolerant', payload: 1, dependsOn: [id(10), id(1_990), open], dependencyMode: 'on_any_terminal' });
    await store.jobEnqueueMany({ jobs });
    await store.jobCancel({ jobId: id(0) });
    expect(await store.jobSettleDependencies({ limit: 1_000 })).toBe(0);
    expect(await store.jobGet({ jobId: id(length) })).toMatchObject({ state: 'cancelled', lastError: `parent ${id(length - 1)} ended cancelled`, pendingParents: 0 });
    expect(await store.jobGet({ jobId: tolerant })).toMatchObject({ state: 'awaiting_parents', pendingParents: 1 });
    expect((await store.jobHistory({ jobId: id(length) })).map((e) => e.state)).toEqual(['awaiting_parents', 'cancelled']);
    const { cascade, dependencies } = store.naming;
    expect(await dataSource.query(`SELECT count(*) AS n FROM ${cascade}`)).toEqual([{ n: 0 }]);
    expect(await dataSource.query(`SELECT count(*) AS n FROM ${dependencies} WHERE settled = 0`)).toEqual([{ n: 1 }]);
  });
});
