import { describe, expect, it } from '@jest/globals';
import { PostgresJobStore } from '../../lib/store/index.js';
import type { JobRecord } from '../../lib/core/index.js';
import { uniqueSchema } from '../support/postgres.js';
import { schemas, useAdapterDataSource } from '../support/postgres-adapter.js';
import { explainingDataSource, nodes, type ExplainedPlan } from '../support/postgres-plans.js';

useAdapterDataSource();

/**
 * Runs `work` on a migrated store whose one connection reports every statement's plan, those run
 * inside functions and triggers included: one connection, so the trigger's cached plans are the
 * ones every statement reuses.
 */
async function withNestedPlans(prefix: string, work: (store: PostgresJobStore, plans: ExplainedPlan[]) => Promise<void>): Promise<void> {
  const { explained, plans } = await explainingDataSource(['-c auto_explain.log_nested_statements=on'], 1);
  const schema = uniqueSchema(prefix);
  schemas.push(schema);
  try {
    const store = new PostgresJobStore({ dataSource: explained, schema });
    await store.migrate();
    await work(store, plans);
  } finally {
    await explained.destroy();
  }
}

describe('PostgreSQL effects trigger', () => {
  it('pairs old and new rows with a hash join, even after its first call in the session saw one row', () =>
    withNestedPlans('pgpair', async (store, plans) => {
      await store.jobEnqueue({ job: { name: 'pair', payload: 0 } });
      expect(await store.jobClaim({ workerId: 'w', limit: 1, queues: ['default'], leaseMs: 60_000 })).toHaveLength(1);
      await store.jobEnqueueMany({ jobs: Array.from({ length: 300 }, (_, i) => ({ name: 'pair', payload: i + 1 })) });
      plans.length = 0;
      expect(await store.jobClaim({ workerId: 'w', limit: 300, queues: ['default'], leaseMs: 60_000 })).toHaveLength(300);
      const pairing = plans.filter((p) => p['Query Text'].includes('FROM new_rows n JOIN old_rows o'));
      expect(pairing).toHaveLength(1);
      const joins = nodes(pairing[0]!.Plan).filter((node) => node['Node Type'].endsWith('Join') || node['Node Type'] === 'Nested Loop');
      expect(joins.map((node) => node['Node Type'])).toEqual(['Hash Join']);
    }));

  it('runs only the effects a change calls for: a claim releases no slot and sends no hint', () =>
    withNestedPlans('pgeff', async (store, plans) => {
      const { id: parent } = await store.jobEnqueue({ job: { name: 'effects', payload: 0 } });
      const { id: child } = await store.jobEnqueue({ job: { name: 'effects', payload: 1, dependsOn: [parent] } });
      /** Which optional effect statements the trigger ran for `work`. */
      const effectsOf = async (work: () => Promise<unknown>) => {
        plans.length = 0;
        await work();
        const texts = plans.map((p) => p['Query Text']);
        return { history: texts.some((t) => t.includes('FROM new_rows n JOIN old_rows o')), slots: texts.some((t) => t.includes('SET job_id = NULL')), hint: texts.some((t) => t.includes('unnest(woken)')) };
      };
      let claimed: JobRecord[] = [];
      expect(await effectsOf(async () => (claimed = await store.jobClaim({ workerId: 'w', limit: 5, queues: ['default'], leaseMs: 60_000 })))).toEqual({ history: true, slots: false, hint: false });
      expect(claimed.map((j) => j.id)).toEqual([parent]);
      // The parent's success releases its slot (none is held, the statement still looks) and, through
      // the settle function, the child, whose change sends the hint.
      expect(await effectsOf(() => store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: parent, attempt: 1, kind: 'succeeded' }] }))).toEqual({ history: true, slots: true, hint: true });
      expect((await store.jobGet({ jobId: child }))?.state).toBe('scheduled');
    }));
});
