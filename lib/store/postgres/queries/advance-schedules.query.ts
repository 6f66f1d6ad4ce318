import type { ScheduleAdvance } from '../../schedules/index.js';
import type { PgExecutor } from '../pg-executor.js';
import { pgInstant } from '../pg-instant.js';
import type { PostgresNaming } from '../postgres-naming.js';

/**
 * Writes back a minting pass in one statement: the schedules arrive as parallel arrays and are
 * matched by primary key, so a pass over 1,000 schedules is one round trip instead of 1,000.
 * The `= ANY` on the ids offers the planner the primary key; joined to the unnest alone, it
 * hashes every schedule. Servers still differ: PostgreSQL 15 reads by key at 50,000 schedules and
 * reads the table whole at 5,000; PostgreSQL 18 walks another index of the table. Only the columns
 * a mint moves are written, on rows the pass locked.
 */
export function advanceSchedulesQuery(t: PostgresNaming) {
  const text =
    `UPDATE ${t.schedules} AS s SET next_fire_at = v.next_fire_at, last_fired_for = v.last_fired_for, last_job_id = v.last_job_id, ` +
    `skipped_ticks = v.skipped_ticks, last_skipped_for = v.last_skipped_for, last_skip_reason = v.last_skip_reason, updated_at = v.updated_at ` +
    `FROM unnest($1::uuid[], $2::timestamptz[], $3::timestamptz[], $4::uuid[], $5::bigint[], $6::timestamptz[], $7::text[], $8::timestamptz[]) ` +
    `AS v(id, next_fire_at, last_fired_for, last_job_id, skipped_ticks, last_skipped_for, last_skip_reason, updated_at) WHERE s.id = ANY($1::uuid[]) AND s.id = v.id`;
  const at = (ms: number | null) => (ms === null ? null : pgInstant(ms));
  return async (db: PgExecutor, advances: readonly ScheduleAdvance[]): Promise<void> => {
    if (advances.length === 0) return;
    await db.query(text, [
      advances.map((a) => a.id),
      advances.map((a) => at(a.nextFireAt)),
      advances.map((a) => at(a.lastFiredFor)),
      advances.map((a) => a.lastJobId),
      advances.map((a) => a.skippedTicks),
      advances.map((a) => at(a.lastSkippedFor)),
      advances.map((a) => a.lastSkipReason),
      advances.map((a) => pgInstant(a.updatedAt)),
    ]);
  };
}
