import type { BlockedSequence } from '../../job-store.types.js';
import { toJob } from '../../job-row.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { fromPgRow, jobColumns, type PgJobRow } from '../postgres-row.js';

/**
 * Sequences held by a job that failed for good, a row per key in key order: the failed jobs come
 * from their partial index (migration 0022), and each is kept when an open `block` edge leads from
 * it to the job behind it: waiting, or cancelled before its turn and still in line, so whatever is
 * enqueued next waits too. A key with two such jobs shows the one that failed first.
 */
export function blockedSequencesQuery(t: PostgresNaming) {
  const text = `
    SELECT DISTINCT ON (j.sequence_key) ${jobColumns('j')}, n.child_id AS next_job_id
    FROM ${t.jobs} j
    CROSS JOIN LATERAL (
      SELECT d.child_id FROM ${t.dependencies} d
      WHERE d.parent_id = j.id AND NOT d.settled AND d.sequence = 'block'
      LIMIT 1
    ) n
    WHERE j.sequence_key IS NOT NULL AND j.state IN ('dead_lettered', 'quarantined') AND ($2::text IS NULL OR j.sequence_key > $2)
    ORDER BY j.sequence_key, j.finished_at, j.id
    LIMIT $1`;
  return async (db: PgExecutor, limit: number, after: string | null): Promise<BlockedSequence[]> =>
    (await db.query<PgJobRow & { next_job_id: string }>(text, [limit, after])).map((row) => ({
      key: row.sequence_key!,
      job: toJob(fromPgRow(row)),
      nextJobId: row.next_job_id,
    }));
}
