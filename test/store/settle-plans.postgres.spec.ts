import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { PostgresJobStore } from '../../lib/store/index.js';
import { dropSchemas, openPostgresDataSource, uniqueSchema } from '../support/postgres.js';

interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Actual Rows'?: number;
  readonly 'Actual Loops'?: number;
  readonly 'Index Name'?: string;
  readonly Plans?: PlanNode[];
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

/**
 * The settle function's statement, run for the outcome of one job of a large batch, reads a handful
 * of rows whatever the statistics say. It is planned on statistics taken while every job of the
 * batch waited (no terminal job at all), as when a batch is written and run before autovacuum
 * analyzes it again: a join from the edges to their parents then walked every terminal job
 * through the state index, and each outcome write of a 10,000-job batch cost five times a plain
 * one (bench/batches.bench.mjs). The plan is read from auto_explain, in a transaction rolled back.
 */
describe('PostgreSQL: the settle statement reads by key', () => {
  let dataSource: DataSource;
  const schema = uniqueSchema('settleplan');
  beforeAll(async () => {
    dataSource = await openPostgresDataSource(3);
  });
  afterAll(async () => {
    await dropSchemas(dataSource, [schema]);
    await dataSource.destroy();
  });

  it('settling one batch job after 1,000 others ended reads no more than a few rows per step', async () => {
    const store = new PostgresJobStore({ dataSource, schema });
    await store.migrate();
    const callback = { name: 'cb', payload: {} };
    await store.jobEnqueueBatch({ jobs: Array.from({ length: 2_000 }, (_, i) => ({ name: 'item', payload: i })), onSuccess: callback, onComplete: callback, onFailure: callback });
    await dataSource.query(`ANALYZE ${store.naming.jobs}`);
    const claimed = await store.jobClaim({ workerId: 'w', limit: 1_000, queues: ['default'], leaseMs: 600_000 });
    await store.jobCompleteMany({ workerId: 'w', outcomes: claimed.slice(1).map((job) => ({ jobId: job.id, attempt: job.attempt, kind: 'succeeded' as const })) });

    const runner = dataSource.createQueryRunner();
    const client = (await runner.connect()) as { on(event: 'notice', listener: (notice: { message?: string }) => void): void };
    const plans: { text: string; plan: PlanNode }[] = [];
    client.on('notice', ({ message }) => {
      const json = message?.slice(message.indexOf('{'));
      if (!json?.startsWith('{')) return;
      const parsed = JSON.parse(json) as { 'Query Text': string; Plan: PlanNode };
      plans.push({ text: parsed['Query Text'], plan: parsed.Plan });
    });
    try {
      for (const setting of ["LOAD 'auto_explain'", 'SET auto_explain.log_min_duration = 0', 'SET auto_explain.log_nested_statements = on', 'SET auto_explain.log_analyze = on', 'SET auto_explain.log_format = json', 'SET client_min_messages = log']) {
        await runner.query(setting);
      }
      await runner.startTransaction();
      await runner.query(`UPDATE ${store.naming.jobs} SET state = 'succeeded', finished_at = now(), worker_id = NULL, leased_until = NULL WHERE id = $1`, [claimed[0]!.id]);
      await runner.rollbackTransaction();
    } finally {
      await runner.release();
    }
    const settle = plans.filter((p) => p.text.trimStart().startsWith('WITH picked AS'));
    expect(settle.length).toBeGreaterThanOrEqual(1);
    for (const { plan } of settle) {
      const read = nodes(plan).map((node) => (node['Actual Rows'] ?? 0) * (node['Actual Loops'] ?? 1));
      // Three edges, three callbacks: nothing near the 1,000 ended jobs or the 2,000 in the batch.
      expect(Math.max(...read)).toBeLessThanOrEqual(20);
      expect(nodes(plan).filter((node) => node['Index Name']?.includes('state'))).toEqual([]);
    }
    await store.close();
  });
});
