import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { PostgresJobStore } from '../../lib/store/index.js';
import { verifyHistory } from '../../lib/verify/index.js';
import { dropSchemas, openPostgresDataSource, uniqueSchema } from '../support/postgres.js';

// Real concurrency: eight claimers, each with its own connection pool (as separate nodes would
// have), race for the same capped jobs. After every claim the test reads the running count of each
// cap from the database; no committed snapshot may ever show a cap exceeded.
const CLAIMERS = 8;
const LIMITS = { 'key:tenant-a': 2, 'key:tenant-b': 3, 'queue:capped': 5 } as const;

const sources: DataSource[] = [];
let admin: DataSource;
const schema = uniqueSchema('lim');

beforeAll(async () => {
  admin = await openPostgresDataSource(4);
  for (let i = 0; i < CLAIMERS; i++) sources.push(await openPostgresDataSource(2));
});
afterAll(async () => {
  await dropSchemas(admin, [schema]);
  await Promise.all([admin, ...sources].map((s) => s.destroy()));
});

async function runningCounts(): Promise<Record<string, number>> {
  const rows: { key: string; n: number }[] = await admin.query(
    `SELECT 'key:' || concurrency_key AS key, count(*)::int AS n FROM "${schema}".jobs
       WHERE state = 'running' AND leased_until > now() AND concurrency_key IS NOT NULL GROUP BY 1
     UNION ALL
     SELECT 'queue:' || queue, count(*)::int FROM "${schema}".jobs
       WHERE state = 'running' AND leased_until > now() GROUP BY queue`,
  );
  return Object.fromEntries(rows.map((r) => [r.key, r.n]));
}

describe('concurrency limits under concurrent claimers on PostgreSQL', () => {
  it(`never exceeds a key or queue cap with ${CLAIMERS} claimers racing, sampled after every claim`, async () => {
    const setup = new PostgresJobStore({ dataSource: admin, schema });
    await setup.migrate();
    await setup.concurrencyLimitSet({ target: { key: 'tenant-a' }, max: LIMITS['key:tenant-a'] });
    await setup.concurrencyLimitSet({ target: { key: 'tenant-b' }, max: LIMITS['key:tenant-b'] });
    await setup.concurrencyLimitSet({ target: { queue: 'capped' }, max: LIMITS['queue:capped'] });
    // As if set ten minutes ago, so that verify judges every claim of the race against them.
    await admin.query(`UPDATE "${schema}".audit_log SET at = at - interval '10 minutes'`);
    const inputs = [];
    for (let i = 0; i < 240; i++) {
      const key = ['tenant-a', 'tenant-b', undefined][i % 3];
      inputs.push({ name: 'limited', queue: i % 4 === 0 ? 'capped' : 'default', payload: i, ...(key ? { concurrencyKey: key } : {}) });
    }
    await setup.jobEnqueueMany({ jobs: inputs });

    const peak: Record<string, number> = {};
    const violations: string[] = [];
    let claims = 0;
    const claimers = sources.map(async (dataSource, index) => {
      const store = new PostgresJobStore({ dataSource, schema });
      const workerId = `claimer-${index}`;
      for (;;) {
        const jobs = await store.jobClaim({ workerId, limit: 3, queues: ['default', 'capped'], leaseMs: 60_000 });
        claims++;
        const counts = await runningCounts();
        for (const [key, max] of Object.entries(LIMITS)) {
          const n = counts[key] ?? 0;
          peak[key] = Math.max(peak[key] ?? 0, n);
          if (n > max) violations.push(`${key} had ${n} running (cap ${max}) after a claim by ${workerId}`);
        }
        if (jobs.length === 0) {
          const left = await admin.query(`SELECT count(*)::int AS n FROM "${schema}".jobs WHERE state <> 'succeeded'`);
          if (left[0].n === 0) return;
          continue;
        }
        await store.jobCompleteMany({ workerId, outcomes: jobs.map((j) => ({ jobId: j.id, attempt: j.attempt, kind: 'succeeded' as const })) });
      }
    });
    await Promise.all(claimers);

    expect(violations).toEqual([]);
    // The caps were actually reached, so the test exercised contention rather than an idle queue.
    expect(peak['key:tenant-a']).toBe(LIMITS['key:tenant-a']);
    expect(peak['key:tenant-b']).toBe(LIMITS['key:tenant-b']);
    expect(claims).toBeGreaterThan(80);
    const done = await admin.query(`SELECT count(*)::int AS n FROM "${schema}".jobs WHERE state = 'succeeded'`);
    expect(done[0].n).toBe(240);
    // verify, from the history alone, agrees: every start judged against its key's and queue's cap (issue 40).
    const report = await verifyHistory(setup);
    expect(report.violations).toEqual([]);
    expect(report.checked).toMatchObject({ attempts: 240, capStarts: 80 + 80 + 60, startsUnattributed: 0 });
  });
});
