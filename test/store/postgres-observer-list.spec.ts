import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { InvalidArgumentError } from '../../lib/core/index.js';
import { OBSERVER_LAG_LIMIT, PostgresJobStore } from '../../lib/store/index.js';
import { uniqueSchema } from '../support/postgres.js';
import { dataSource, freshStore, schemas, useAdapterDataSource } from '../support/postgres-adapter.js';
import { explainingDataSource, nodes, type ExplainedPlan, type PlanNode } from '../support/postgres-plans.js';

useAdapterDataSource();

const LEASE_MS = 30_000;
const ENTRIES = 50_000;

/**
 * The observers' lag on PostgreSQL: read through the history key in delivery order, stopped at the
 * cap per observer whatever the log holds, and held back behind an open transaction exactly as
 * historyRead is.
 */
describe('PostgreSQL observerList', () => {
  let explained: DataSource;
  let plans: ExplainedPlan[];
  let store: PostgresJobStore;

  beforeAll(async () => {
    // log_analyze: the plans carry the rows each scan actually read.
    ({ explained, plans } = await explainingDataSource(['-c auto_explain.log_analyze=on'], 1));
    const schema = uniqueSchema('pgobs');
    schemas.push(schema);
    store = new PostgresJobStore({ dataSource: explained, schema });
    await store.migrate();
    const { history, cursors } = store.naming;
    // 'behind' starts before the whole log, 'middle' 5,000 entries from its end, 'current' at its end.
    await store.observerLease({ observer: 'behind', workerId: 'w', leaseMs: LEASE_MS });
    for (let batch = 0; batch < 5; batch++) {
      await explained.query(`INSERT INTO ${history} (job_id, name, state, attempt) SELECT gen_random_uuid(), 'n', 'scheduled', 0 FROM generate_series(1, ${ENTRIES / 5})`);
    }
    await explained.query(
      `INSERT INTO ${cursors} (observer, last_tx, last_id) SELECT 'middle', tx, id FROM ${history} ORDER BY tx DESC, id DESC OFFSET 5000 LIMIT 1`,
    );
    await store.observerLease({ observer: 'current', workerId: 'w', leaseMs: LEASE_MS });
    await explained.query(`ANALYZE ${history}; ANALYZE ${cursors}`);
  });

  afterAll(async () => {
    await explained.destroy();
  });

  it(`reads the lag through the history key, at most ${OBSERVER_LAG_LIMIT} entries per observer, at ${ENTRIES} entries`, async () => {
    plans.length = 0;
    const list = await store.observerList();
    expect(list.map((s) => [s.observer, s.lagEntries, s.lagCapped, s.oldestUndeliveredAt === null])).toEqual([
      ['behind', OBSERVER_LAG_LIMIT, true, false],
      ['current', 0, false, true],
      ['middle', 5_000, false, false],
    ]);
    const scans = plans
      .flatMap((plan) => nodes(plan.Plan))
      .filter((node) => node['Relation Name'] === 'job_history');
    expect(scans.length).toBeGreaterThan(0);
    for (const scan of scans) {
      expect([scan['Node Type'], scan['Index Name']]).toEqual([expect.stringMatching(/^Index (Only )?Scan$/), expect.stringContaining('job_history_pkey')]);
    }
    // Nothing sorted, nothing read past the cap: one scan per observer counts at most cap + 1, one more finds its oldest entry.
    expect(plans.flatMap((plan) => nodes(plan.Plan)).filter((node: PlanNode) => /Sort|Bitmap|Seq Scan/.test(node['Node Type']))).toEqual([]);
    const read = scans.reduce((sum, scan) => sum + Number(scan['Actual Rows']) * Number(scan['Actual Loops']), 0);
    expect(read).toBeLessThanOrEqual(3 * (OBSERVER_LAG_LIMIT + 1) + 3);
    expect(read).toBeGreaterThanOrEqual(OBSERVER_LAG_LIMIT + 5_000);
  });

  it('holds back the entries of a transaction still open, as historyRead does, and counts them once it commits', async () => {
    const fresh = freshStore();
    await fresh.migrate();
    const lease = await fresh.observerLease({ observer: 'o', workerId: 'w', leaseMs: LEASE_MS });
    const runner = dataSource.createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    try {
      // The open transaction writes first; the later one commits first, behind it in delivery order.
      await fresh.jobEnqueue({ job: { name: 'slow.tx', payload: 1 }, manager: runner.manager });
      await fresh.jobEnqueue({ job: { name: 'fast.tx', payload: 2 } });
      expect(await fresh.historyRead({ after: lease!.position, limit: 10 })).toEqual([]);
      expect(await fresh.observerList()).toEqual([expect.objectContaining({ observer: 'o', lagEntries: 0, oldestUndeliveredAt: null })]);
      await runner.commitTransaction();
      const fed = await fresh.historyRead({ after: lease!.position, limit: 10 });
      expect(fed.map((e) => e.name)).toEqual(['slow.tx', 'fast.tx']);
      expect(await fresh.observerList()).toEqual([expect.objectContaining({ lagEntries: 2, oldestUndeliveredAt: fed[0]!.at })]);
    } finally {
      if (runner.isTransactionActive) await runner.rollbackTransaction();
      await runner.release();
    }
  });

  it('refuses bad params before sending any statement', async () => {
    const texts: string[] = [];
    const fresh = freshStore({ onStatement: (text) => texts.push(text) });
    await fresh.migrate();
    texts.length = 0;
    const list = fresh.observerList.bind(fresh) as (params: unknown) => Promise<unknown>;
    for (const params of [{ limit: 0 }, { limit: 1_001 }, 'x', null]) {
      await expect(list(params)).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    expect(texts).toEqual([]);
    await fresh.observerList({ limit: 1_000 });
    expect(texts.some((text) => text.includes('observer_cursors'))).toBe(true);
  });
});
