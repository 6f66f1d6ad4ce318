import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { PostgresJobStore } from '../../lib/store/index.js';
import { dropSchemas, openPostgresDataSource, uniqueSchema } from '../support/postgres.js';

// Real concurrency on the database's clock: eight claimers, each with its own pool (as separate
// nodes would have), race for rate-limited jobs. Some claimers "crash" now and then: they take jobs
// on a short lease and never report, so those leases lapse and are reclaimed, and both starts
// count. Afterwards the test reads every start from the transition log (a `running` entry, stamped
// with the claim statement's time, as the start it used is) and checks every window that begins at a start.
const CLAIMERS = 8;
const WINDOW_MS = 250;
const RATES = { 'key:tenant-a': 3, 'key:tenant-b': 5, 'queue:rated': 4 } as const;
const JOBS = 90;

const sources: DataSource[] = [];
let admin: DataSource;
const schema = uniqueSchema('rate');

beforeAll(async () => {
  admin = await openPostgresDataSource(4);
  for (let i = 0; i < CLAIMERS; i++) sources.push(await openPostgresDataSource(2));
});
afterAll(async () => {
  await dropSchemas(admin, [schema]);
  await Promise.all([admin, ...sources].map((s) => s.destroy()));
});

/** Every start (a `running` entry) per rate-limited key, in microseconds since the epoch, ascending. */
async function startsByKey(): Promise<Map<string, number[]>> {
  const rows: { key: string; us: string }[] = await admin.query(
    `SELECT k.key, (extract(epoch FROM h.at) * 1000000)::bigint::text AS us
       FROM "${schema}".job_history h JOIN "${schema}".jobs j ON j.id = h.job_id
       CROSS JOIN LATERAL (VALUES ('queue:' || j.queue), ('key:' || j.concurrency_key)) AS k(key)
      WHERE h.state = 'running' AND k.key IS NOT NULL
      ORDER BY h.at`,
  );
  const starts = new Map<string, number[]>();
  for (const row of rows) starts.set(row.key, [...(starts.get(row.key) ?? []), Number(row.us)]);
  return starts;
}

/** The most starts any window of WINDOW_MS holds; each window worth checking begins at a start. */
function busiestWindow(starts: readonly number[]): number {
  let most = 0;
  for (let i = 0, j = 0; i < starts.length; i++) {
    while (j < starts.length && starts[j]! < starts[i]! + WINDOW_MS * 1000) j++;
    most = Math.max(most, j - i);
  }
  return most;
}

describe('rate limits under concurrent claimers on PostgreSQL', () => {
  it(`never lets a window hold more than its max starts with ${CLAIMERS} claimers racing and crashing`, async () => {
    const setup = new PostgresJobStore({ dataSource: admin, schema });
    await setup.migrate();
    await setup.rateLimitSet({ target: { key: 'tenant-a' }, rate: { max: RATES['key:tenant-a'], perMs: WINDOW_MS } });
    await setup.rateLimitSet({ target: { key: 'tenant-b' }, rate: { max: RATES['key:tenant-b'], perMs: WINDOW_MS } });
    await setup.rateLimitSet({ target: { queue: 'rated' }, rate: { max: RATES['queue:rated'], perMs: WINDOW_MS } });
    const inputs = [];
    for (let i = 0; i < JOBS; i++) {
      const key = ['tenant-a', 'tenant-b', undefined][i % 3];
      inputs.push({ name: 'rated', queue: i % 2 === 0 ? 'rated' : 'default', payload: i, maxAttempts: 10, ...(key ? { concurrencyKey: key } : {}) });
    }
    await setup.jobEnqueueMany({ jobs: inputs });

    let claims = 0;
    let abandoned = 0;
    const claimers = sources.map(async (dataSource, index) => {
      const store = new PostgresJobStore({ dataSource, schema });
      const workerId = `claimer-${index}`;
      for (;;) {
        // One claim in nine by claimers 0 and 1 is a crash: a short lease, never renewed or reported.
        const crash = index < 2 && claims % 9 === 0;
        const jobs = await store.jobClaim({ workerId, limit: 3, queues: ['default', 'rated'], leaseMs: crash ? 50 : 60_000 });
        claims++;
        if (jobs.length === 0) {
          const left = await admin.query(`SELECT count(*)::int AS n FROM "${schema}".jobs WHERE state <> 'succeeded'`);
          if (left[0].n === 0) return;
          continue;
        }
        if (crash) {
          abandoned += jobs.length;
          continue;
        }
        await store.jobCompleteMany({ workerId, outcomes: jobs.map((j) => ({ jobId: j.id, attempt: j.attempt, kind: 'succeeded' as const })) });
      }
    });
    await Promise.all(claimers);

    const starts = await startsByKey();
    const busiest = Object.fromEntries(Object.keys(RATES).map((key) => [key, busiestWindow(starts.get(key) ?? [])]));
    // Exact: every window holds at most the max, and the busiest holds exactly the max, so the
    // limit was reached (the claimers contended) rather than never approached.
    expect(busiest).toEqual(RATES);
    // Lapsed leases were reclaimed, and those reclaims were starts the windows counted.
    expect(abandoned).toBeGreaterThan(0);
    const [{ n: reclaims }] = await admin.query(`SELECT count(*)::int AS n FROM "${schema}".jobs WHERE attempt > 1`);
    expect(reclaims).toBeGreaterThan(0);
    const counted = [...starts.values()].reduce((sum, list) => sum + list.length, 0);
    const [{ n: running }] = await admin.query(
      `SELECT count(*)::int AS n FROM "${schema}".job_history h JOIN "${schema}".jobs j ON j.id = h.job_id WHERE h.state = 'running' AND (j.queue = 'rated' OR j.concurrency_key IS NOT NULL)`,
    );
    expect(counted).toBeGreaterThanOrEqual(running);
    const done = await admin.query(`SELECT count(*)::int AS n FROM "${schema}".jobs WHERE state = 'succeeded'`);
    expect(done[0].n).toBe(JOBS);
  });
});
