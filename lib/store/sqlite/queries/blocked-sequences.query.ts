import type { Database } from 'better-sqlite3';
import { toJob } from '../../job-row.js';
import type { BlockedSequence } from '../../job-store.types.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import { fromSqliteRow, type SqliteJobRow } from '../sqlite-row.js';

/**
 * Sequences held by a job that failed for good, a row per key in key order (see the PostgreSQL
 * query): the failed jobs from their partial index (migration 0022), each with the job behind an
 * open `block` edge (waiting, or cancelled in line); of two on one key, the one that failed first.
 */
export function blockedSequencesQuery(db: Database, t: SqliteNaming) {
  const blocked = db.prepare(`
    SELECT * FROM (
      SELECT j.*, (
          SELECT d.child_id FROM ${t.dependencies} d
          WHERE d.parent_id = j.id AND d.settled = 0 AND d.sequence = 'block' LIMIT 1
        ) AS next_job_id,
        row_number() OVER (PARTITION BY j.sequence_key ORDER BY j.finished_at, j.id) AS place
      FROM ${t.jobs} j
      WHERE j.sequence_key IS NOT NULL AND j.state IN ('dead_lettered', 'quarantined') AND (@after IS NULL OR j.sequence_key > @after)
        AND EXISTS (
          SELECT 1 FROM ${t.dependencies} d
          WHERE d.parent_id = j.id AND d.settled = 0 AND d.sequence = 'block')
    ) WHERE place = 1 ORDER BY sequence_key LIMIT @limit`);
  return (limit: number, after: string | null): BlockedSequence[] =>
    (blocked.all({ limit, after }) as (SqliteJobRow & { next_job_id: string })[]).map((row) => ({
      key: row.sequence_key!,
      job: toJob(fromSqliteRow(row)),
      nextJobId: row.next_job_id,
    }));
}
