import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Database } from 'better-sqlite3';
import { DataSource } from 'typeorm';
import { SqliteJobStore } from '../../lib/store/index.js';

const QUEUES = Array.from({ length: 1_000 }, (_, k) => `q${k}`);
let dataSource: DataSource;
let store: SqliteJobStore;
const sent: string[] = [];

beforeAll(async () => {
  // better-sqlite3 reports every statement it runs to `verbose`, with its parameters written in.
  dataSource = await new DataSource({ type: 'better-sqlite3', database: ':memory:', verbose: (text: unknown) => sent.push(String(text)) }).initialize();
  store = new SqliteJobStore({ dataSource });
  await store.migrate();
  await store.jobEnqueueMany({ jobs: QUEUES.map((queue, k) => ({ name: 'plan', queue, payload: k })) });
  await store.queuePause({ queue: 'q1' });
});

afterAll(async () => {
  await dataSource.destroy();
});

/** What SQLite plans for the claim statement the store just ran: each step's detail and its parent's. */
async function claimPlan(): Promise<Array<{ detail: string; parent: string }>> {
  sent.length = 0;
  await store.jobClaim({ workerId: 'w', limit: 10, queues: QUEUES, leaseMs: 60_000, includeLapsed: true });
  const claim = sent.find((text) => text.includes('json_each('))!;
  const db = (dataSource.driver as unknown as { databaseConnection: Database }).databaseConnection;
  const rows = db.prepare(`EXPLAIN QUERY PLAN ${claim}`).all() as Array<{ id: number; parent: number; detail: string }>;
  const byId = new Map(rows.map((row) => [row.id, row.detail]));
  return rows.map((row) => ({ detail: row.detail, parent: byId.get(row.parent) ?? '' }));
}

describe('SQLite claims for a worker serving 1,000 queues', () => {
  it.each(['unlimited', 'limited'])('%s: read the queue lists once, as filters, and the pauses through their index', async (form) => {
    if (form === 'limited') await store.concurrencyLimitSet({ target: { queue: 'q999' }, max: 1_000 });
    const plan = await claimPlan();
    const details = plan.map((step) => step.detail);
    // Due jobs in the claim index's order, one priority's range; lapsed leases from the lease index. Never the running
    // jobs' queue index, probed once per listed queue.
    expect(details).toContainEqual(expect.stringMatching(/^SEARCH durable_scheduler_jobs USING INDEX durable_scheduler_jobs_claim_idx \(priority=\? AND run_at<\?\)$/));
    expect(details).toContainEqual(expect.stringMatching(/^SEARCH durable_scheduler_jobs USING INDEX durable_scheduler_jobs_lease_idx \(leased_until<\?\)$/));
    expect(details.filter((detail) => detail.includes('running_queue_idx'))).toEqual([]);
    // Each list is built once per statement: never correlated, json_each read only to build one.
    expect(details.filter((detail) => detail.includes('CORRELATED LIST'))).toEqual([]);
    const lists = plan.filter((step) => step.detail.includes('json_each'));
    expect(lists.length).toBeGreaterThan(0);
    expect(lists.filter((step) => !step.parent.startsWith('LIST SUBQUERY'))).toEqual([]);
    // The queues table is read only through the index of the paused ones.
    const queueReads = details.filter((detail) => detail.includes('durable_scheduler_queues'));
    expect(queueReads.length).toBeGreaterThan(0);
    expect(queueReads.filter((detail) => detail !== 'SCAN durable_scheduler_queues USING COVERING INDEX durable_scheduler_queues_paused_idx')).toEqual([]);
  });
});
