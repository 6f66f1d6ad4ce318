import type { NewJob } from '../../enqueue-input.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

/**
 * Inserts a batch in one statement. A job whose id exists is skipped (that is how a second mint of
 * one occurrence becomes a no-op), and jobs due now send one wake-up hint per queue, which
 * PostgreSQL delivers when the surrounding transaction commits.
 */
export function enqueueJobsQuery(t: PostgresNaming) {
  const text = `
    WITH input AS (
      SELECT r.*, date_trunc('milliseconds', COALESCE(r.run_at, now() + r.delay_ms * interval '1 millisecond')) AS at
      FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::bigint[], $7::integer[], $9::uuid[])
        WITH ORDINALITY AS r(id, name, queue, payload, run_at, delay_ms, max_attempts, schedule_id, ord)
    ), inserted AS (
      INSERT INTO ${t.jobs} (id, name, queue, payload, state, run_at, scheduled_for, max_attempts, schedule_id)
      SELECT id, name, queue, payload::jsonb, 'scheduled', at, at, max_attempts, schedule_id FROM input ORDER BY ord
      ON CONFLICT (id) DO NOTHING
      RETURNING id, queue, run_at
    ), wake AS (
      SELECT pg_notify($8, queue) FROM (SELECT DISTINCT queue FROM inserted WHERE run_at <= now()) due
    )
    SELECT id FROM inserted, (SELECT count(*) FROM wake) AS hinted`;

  return async (db: PgExecutor, jobs: readonly NewJob[]): Promise<Set<string>> => {
    const rows = await db.query<{ id: string }>(text, [
      jobs.map((j) => j.id),
      jobs.map((j) => j.name),
      jobs.map((j) => j.queue),
      jobs.map((j) => j.payload),
      jobs.map((j) => (j.runAt === null ? null : new Date(j.runAt))),
      jobs.map((j) => j.delayMs),
      jobs.map((j) => j.maxAttempts),
      t.channel,
      jobs.map((j) => j.scheduleId ?? null),
    ]);
    return new Set(rows.map((row) => row.id));
  };
}
