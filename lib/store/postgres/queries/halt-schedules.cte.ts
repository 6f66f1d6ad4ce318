import type { PostgresNaming } from '../postgres-naming.js';

/**
 * A CTE that stops the schedules whose occurrences `source` just dead-lettered or quarantined. It
 * rides on the outcome write's statement, so it applies exactly when that write does. `source`
 * must return `id`, `state` and `schedule_id`.
 */
export function haltSchedulesCte(t: PostgresNaming, source: string): string {
  return `halted AS (
      UPDATE ${t.schedules} s SET state = 'dead_lettered', halted_job_id = o.id, updated_at = now()
      FROM ${source} o
      WHERE s.id = o.schedule_id AND o.state IN ('dead_lettered', 'quarantined') AND s.state <> 'dead_lettered'
      RETURNING s.id
    )`;
}
