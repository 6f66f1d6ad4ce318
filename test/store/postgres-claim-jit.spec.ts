import { describe, expect, it } from '@jest/globals';
import { PostgresJobStore } from '../../lib/store/index.js';
import { uniqueSchema } from '../support/postgres.js';
import { schemas, useAdapterDataSource } from '../support/postgres-adapter.js';
import { explainingDataSource } from '../support/postgres-plans.js';

useAdapterDataSource();

describe('PostgreSQL JIT and the limited claim', () => {
  it('plans the claim under a limit with JIT off, in its own transaction only', async () => {
    // Every statement's plan comes back to this client, with the planner settings that differ from
    // the defaults; JIT is asked for at any cost, so a claim planned with it on would compile.
    const { explained, plans } = await explainingDataSource(['-c auto_explain.log_settings=on', '-c jit_above_cost=0'], 2);
    const schema = uniqueSchema('pgjit');
    schemas.push(schema);
    try {
      const store = new PostgresJobStore({ dataSource: explained, schema });
      await store.migrate();
      await store.concurrencyLimitSet({ target: { queue: 'default' }, max: 100 });
      await store.jobEnqueueMany({ jobs: Array.from({ length: 20 }, (_, i) => ({ name: 'jit', payload: i })) });
      plans.length = 0;
      expect(await store.jobClaim({ workerId: 'w1', limit: 10, queues: ['default'], leaseMs: 60_000 })).toHaveLength(10);
      const limited = plans.filter((plan) => plan['Query Text'].includes('wanted AS'));
      expect(limited).toHaveLength(1);
      expect(limited[0]!.Settings?.jit).toBe('off');
      expect(limited[0]!.JIT).toBeUndefined();
      // The setting was the claim's own: a statement after it on the same pool plans with JIT allowed.
      plans.length = 0;
      await explained.query('SELECT 1 AS after_claim');
      const after = plans.find((plan) => plan['Query Text'].includes('after_claim'));
      expect(after).toBeDefined();
      expect(after!.Settings?.jit).toBeUndefined();
    } finally {
      await explained.destroy();
    }
  });
});
