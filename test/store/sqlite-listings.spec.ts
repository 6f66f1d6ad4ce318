import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { SqliteJobStore } from '../../lib/store/index.js';

const dir = mkdtempSync(join(tmpdir(), 'durable-scheduler-listings-'));
let dataSource: DataSource;
const texts: string[] = [];

beforeAll(async () => {
  dataSource = await new DataSource({ type: 'better-sqlite3', database: join(dir, 'listings.db'), verbose: (text: unknown) => texts.push(String(text)) }).initialize();
});

afterAll(async () => {
  await dataSource.destroy();
  rmSync(dir, { recursive: true, force: true });
});

/** How SQLite runs a statement the store sent (better-sqlite3 reports it with its values in place), one line per step. */
async function planOf(text: string): Promise<string[]> {
  const rows: { detail: string }[] = await dataSource.query(`EXPLAIN QUERY PLAN ${text}`);
  return rows.map((row) => row.detail);
}

describe('SQLite listings and counts', () => {
  it('lists one state backwards through the (state) index, and all states backwards by rowid, with no sort', async () => {
    const store = new SqliteJobStore({ dataSource, tablePrefix: 'plan_' });
    await store.migrate();
    await store.jobEnqueueMany({ jobs: Array.from({ length: 50 }, (_, i) => ({ name: 'job', payload: i })) });
    texts.length = 0;
    await store.jobListPage({ state: 'scheduled', limit: 5 });
    const one = texts.find((t) => t.includes("state = 'scheduled' COLLATE NOCASE AND seq <"))!;
    expect(await planOf(one)).toEqual([expect.stringMatching(/^SEARCH "?plan_jobs"? USING INDEX "?plan_jobs_state_idx"? \(state=\? AND rowid<\?\)$/)]);
    texts.length = 0;
    await store.jobListPage({ limit: 5 });
    const all = texts.find((t) => t.includes('ORDER BY seq DESC'))!;
    expect(all).not.toContain('state =');
    expect(await planOf(all)).toEqual([expect.stringMatching(/^SEARCH "?plan_jobs"? USING INTEGER PRIMARY KEY \(rowid<\?\)$/)]);
    // No other statement asks for NOCASE, so none is drawn to the state index: the claim keeps
    // reading the claim index, one priority's range in run_at order.
    texts.length = 0;
    expect(await store.jobClaim({ workerId: 'w', limit: 5, queues: ['default'], leaseMs: 60_000 })).toHaveLength(5);
    const claim = texts.find((t) => t.includes('run_at'))!;
    const claimPlan = await planOf(claim);
    expect(claimPlan).toContainEqual(expect.stringMatching(/USING INDEX "?plan_jobs_claim_idx"? \(priority=\? AND run_at<\?\)$/));
    expect(claimPlan.filter((step) => step.includes('plan_jobs_state_idx'))).toEqual([]);
  });

  it('migration 12 seeds the counts from the jobs already stored', async () => {
    const store = new SqliteJobStore({ dataSource, tablePrefix: 'seed_' });
    await store.migrate();
    await store.jobEnqueueMany({ jobs: Array.from({ length: 5 }, (_, i) => ({ name: 'job', payload: i, queue: i < 2 ? 'a' : 'b' })) });
    await store.jobClaim({ workerId: 'w', limit: 1, queues: ['a'], leaseMs: 60_000 });
    // Back to version 9's schema: no index, no counts, no counting triggers.
    for (const event of ['insert', 'update', 'delete']) await dataSource.query(`DROP TRIGGER seed_jobs_count_${event}`);
    await dataSource.query(`DROP TABLE seed_job_counts`);
    await dataSource.query(`DROP INDEX seed_jobs_state_idx`);
    await dataSource.query(`DELETE FROM seed_migrations WHERE version = 12`);
    await dataSource.query(`INSERT INTO seed_jobs (id, name, queue, payload, state, run_at, scheduled_for, max_attempts, created_at, updated_at)
      VALUES ('0190a5a0-0000-7000-8000-000000000001', 'job', 'b', '1', 'scheduled', 0, 0, 3, 0, 0)`);
    const upgraded = new SqliteJobStore({ dataSource, tablePrefix: 'seed_' });
    await upgraded.migrate();
    expect((await upgraded.jobStats()).counts).toEqual([
      { queue: 'a', state: 'running', count: 1 },
      { queue: 'a', state: 'scheduled', count: 1 },
      { queue: 'b', state: 'scheduled', count: 4 },
    ]);
    await upgraded.jobClaim({ workerId: 'w', limit: 2, queues: ['b'], leaseMs: 60_000 });
    expect((await upgraded.jobStats()).counts).toEqual([
      { queue: 'a', state: 'running', count: 1 },
      { queue: 'a', state: 'scheduled', count: 1 },
      { queue: 'b', state: 'running', count: 2 },
      { queue: 'b', state: 'scheduled', count: 2 },
    ]);
  });
});
