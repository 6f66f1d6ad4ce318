import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { Database } from 'better-sqlite3';
import { DataSource } from 'typeorm';
import { SqliteJobStore } from '../../lib/store/index.js';

const LEASE = 3_600_000;
let dataSource: DataSource;
let store: SqliteJobStore;
const sent: string[] = [];

beforeEach(async () => {
  sent.length = 0;
  // better-sqlite3 reports every statement it runs to `verbose`, with its parameters written in.
  dataSource = await new DataSource({ type: 'better-sqlite3', database: ':memory:', verbose: (text: unknown) => sent.push(String(text)) }).initialize();
  store = new SqliteJobStore({ dataSource });
  await store.migrate();
});

afterEach(async () => {
  await dataSource.destroy();
});

const jobs = (n: number, extra: object) => Array.from({ length: n }, (_, i) => ({ name: 'held', payload: i, ...extra }));
const db = () => (dataSource.driver as unknown as { databaseConnection: Database }).databaseConnection;
const parked = () => db().prepare(`SELECT parked_key AS key, count(*) AS n FROM ${store.naming.jobs} WHERE state = 'scheduled' GROUP BY 1 ORDER BY 1`).all();

describe('SQLite claims past held-back jobs', () => {
  it('issue 35 item 1: due jobs enqueued while their key is at its cap join its lane at once; future-dated ones do not', async () => {
    await store.concurrencyLimitSet({ target: { key: 'hot' }, max: 1 });
    await store.jobEnqueueMany({ jobs: jobs(1, { concurrencyKey: 'hot' }) });
    expect(await store.jobClaim({ workerId: 'w', limit: 1, queues: ['default'], leaseMs: LEASE })).toHaveLength(1);
    await store.jobEnqueueMany({ jobs: [...jobs(3_000, { concurrencyKey: 'hot', priority: -10 }), ...jobs(2, { concurrencyKey: 'hot', delayMs: 60_000 }), ...jobs(20, {})] });
    expect(parked()).toEqual([
      { key: null, n: 22 },
      { key: 'key:hot', n: 3_000 },
    ]);
  });

  it('issue 35 item 1: a claim beside a parked backlog reads it through indexes in a few statements, whatever its length', async () => {
    await store.concurrencyLimitSet({ target: { key: 'hot' }, max: 1 });
    await store.jobEnqueueMany({ jobs: jobs(1, { concurrencyKey: 'hot' }) });
    expect(await store.jobClaim({ workerId: 'w', limit: 1, queues: ['default'], leaseMs: LEASE })).toHaveLength(1);
    await store.jobEnqueueMany({ jobs: [...jobs(5_000, { concurrencyKey: 'hot', priority: -10 }), ...jobs(50, {})] });
    sent.length = 0;
    expect(await store.jobClaim({ workerId: 'w', limit: 8, queues: ['default'], leaseMs: LEASE })).toHaveLength(8);
    const reads = sent.filter((text) => /^\s*SELECT/i.test(text) && text.includes(store.naming.jobs));
    expect(reads.length).toBeLessThan(20);
    for (const text of reads) {
      const plan = (db().prepare(`EXPLAIN QUERY PLAN ${text}`).all() as Array<{ detail: string }>).map((row) => row.detail);
      // No read of the jobs table walks it whole: each one goes through an index.
      const table = store.naming.jobs.replace(/"/g, '');
      expect({ text, scans: plan.filter((detail) => detail.replace(/"/g, '').startsWith(`SCAN ${table}`) && !detail.includes('INDEX')) }).toEqual({ text, scans: [] });
    }
  });
});
