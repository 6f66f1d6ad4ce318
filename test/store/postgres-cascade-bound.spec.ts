import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { PostgresJobStore } from '../../lib/store/index.js';
import { INLINE_SETTLE_LIMIT, SETTLE_EDGES_PER_ENDED_JOB } from '../../lib/store/postgres/postgres-effects.js';
import { dropSchemas, openPostgresDataSource, uniqueSchema } from '../support/postgres.js';

const id = (n: number) => `0190a5a4-0000-7000-8000-${String(n).padStart(12, '0')}`;

/**
 * Issue 19: one outcome write settles at most INLINE_SETTLE_LIMIT edges (and three more per job it
 * ended), every level of its cascade counted, and never fails for a deeper one; maintenance settles the rest.
 */
const BUDGET = INLINE_SETTLE_LIMIT + SETTLE_EDGES_PER_ENDED_JOB;
describe('PostgreSQL cascade: bounded inline, finished by maintenance', () => {
  let dataSource: DataSource;
  const schema = uniqueSchema('cascade');
  beforeAll(async () => {
    dataSource = await openPostgresDataSource(2);
  });
  afterAll(async () => {
    await dropSchemas(dataSource, [schema]);
    await dataSource.destroy();
  });

  it('a dead-lettered root of a chain of 1,500 cancels 1,003 levels in its outcome write and leaves 497 to maintenance', async () => {
    const store = new PostgresJobStore({ dataSource, schema });
    await store.migrate();
    const length = 1_500;
    await store.jobEnqueueMany({
      jobs: Array.from({ length: length + 1 }, (_, i) => ({ id: id(i), name: 'chain', payload: i, ...(i === 0 ? { maxAttempts: 1 } : { dependsOn: [id(i - 1)] }) })),
    });
    const [job] = await store.jobClaim({ workerId: 'w', limit: 1, queues: ['default'], leaseMs: 60_000 });
    const [result] = await store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: job!.id, attempt: job!.attempt, kind: 'dead_lettered', error: 'broken' }] });
    expect(result).toMatchObject({ status: 'applied', state: 'dead_lettered' });
    const cancelled = async () => (await store.jobStats()).counts.find((c) => c.state === 'cancelled')?.count ?? 0;
    expect(await cancelled()).toBe(BUDGET);
    expect(await store.jobGet({ jobId: id(BUDGET + 1) })).toMatchObject({ state: 'awaiting_parents' });
    expect(await store.jobSettleDependencies({ limit: 1_000 })).toBe(length - BUDGET);
    expect(await store.jobSettleDependencies({ limit: 1_000 })).toBe(0);
    expect(await cancelled()).toBe(length);
    expect(await store.jobGet({ jobId: id(length) })).toMatchObject({ state: 'cancelled', lastError: `parent ${id(length - 1)} ended cancelled` });
    await store.close();
  });
});
