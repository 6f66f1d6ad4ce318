import { describe, expect, it } from '@jest/globals';
import { dataSource, freshStore, useAdapterDataSource } from '../support/postgres-adapter.js';

useAdapterDataSource();

describe('PostgreSQL job rows', () => {
  it('reads every instant to the millisecond, truncated as a Date truncates, whatever its microseconds', async () => {
    const store = freshStore();
    await store.migrate();
    const jobs = store.naming.table('jobs');
    const cases = [
      ['2026-01-02 03:04:05.000000+00', Date.UTC(2026, 0, 2, 3, 4, 5, 0)],
      ['2026-01-02 03:04:05.000001+00', Date.UTC(2026, 0, 2, 3, 4, 5, 0)],
      ['2026-01-02 03:04:05.999999+00', Date.UTC(2026, 0, 2, 3, 4, 5, 999)],
      ['2026-01-02 03:04:05.123999+00', Date.UTC(2026, 0, 2, 3, 4, 5, 123)],
      ['2099-12-31 23:59:59.999999+00', Date.UTC(2099, 11, 31, 23, 59, 59, 999)],
      ['1999-12-31 23:59:59.999000+00', Date.UTC(1999, 11, 31, 23, 59, 59, 999)],
    ] as const;
    for (const [text, expected] of cases) {
      const { id } = await store.jobEnqueue({ job: { name: 'instant', payload: text } });
      await dataSource.query(
        `UPDATE ${jobs} SET run_at = $2, scheduled_for = $2, created_at = $2, updated_at = $2, finished_at = $2, state = 'running', leased_until = $2 WHERE id = $1`,
        [id, text],
      );
      const job = (await store.jobGet({ jobId: id }))!;
      expect([job.runAt, job.scheduledFor, job.createdAt, job.updatedAt, job.finishedAt, job.leasedUntil].map((d) => d?.getTime())).toEqual(Array(6).fill(expected));
    }
  });
});
