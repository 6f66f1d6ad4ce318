import type { HistoryTrimResult } from '../../job-store.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

/** The largest xid8: the upper bound of the log when no observer holds entries back. */
const LAST_TX = '18446744073709551615';
const LAST_ID = '9223372036854775807';

/**
 * One pass of the history trim, bounded by what was written since the last one. It reads the
 * entries after its place in the log (kept in the maintenance table), up to `limit`, in (tx, id)
 * order through the primary key; each job among them is cut down to its newest `keep` entries
 * through the (job_id, id) index; and the place moves past what was read. A job can only pass the
 * bound by gaining an entry, so looking at the jobs that gained one is enough.
 *
 * It never reads or deletes past what every observer has passed (their entries stay until
 * delivered). Its place never moves into transactions that may still be open, since one of them
 * could yet commit an entry behind it (history-read.query.ts holds those back for the same
 * reason): entries read beyond that point are trimmed now and read again by a later pass, and only
 * the entries passed count as `examined`. Another node's pass in progress holds the place's row,
 * and this one then does nothing.
 */
export function historyTrimQuery(t: PostgresNaming) {
  const horizon = `(coalesce((SELECT last_tx FROM upto), '${LAST_TX}'), coalesce((SELECT last_id FROM upto), ${LAST_ID}))`;
  const text = `
    WITH place AS MATERIALIZED (
      SELECT last_tx, last_id FROM ${t.maintenance} WHERE task = 'history_trim' FOR UPDATE SKIP LOCKED
    ), upto AS MATERIALIZED (
      SELECT last_tx, last_id FROM ${t.cursors} ORDER BY last_tx, last_id LIMIT 1
    ), batch AS MATERIALIZED (
      SELECT h.tx, h.id, h.job_id FROM ${t.history} h
      WHERE (h.tx, h.id) > ((SELECT last_tx FROM place), (SELECT last_id FROM place)) AND (h.tx, h.id) <= ${horizon}
      ORDER BY h.tx, h.id
      LIMIT $2
    ), passed AS MATERIALIZED (
      SELECT tx, id FROM batch WHERE tx < pg_snapshot_xmin(pg_current_snapshot())
    ), doomed AS (
      SELECT x.tx, x.id
      FROM (SELECT DISTINCT job_id FROM batch) j
      CROSS JOIN LATERAL (SELECT h.tx, h.id FROM ${t.history} h WHERE h.job_id = j.job_id ORDER BY h.id DESC OFFSET $1) x
      WHERE (x.tx, x.id) <= ${horizon}
    ), trimmed AS (
      DELETE FROM ${t.history} h USING doomed d WHERE h.tx = d.tx AND h.id = d.id
      RETURNING 1
    ), moved AS (
      UPDATE ${t.maintenance} m SET last_tx = p.tx, last_id = p.id, updated_at = now()
      FROM (SELECT tx, id FROM passed ORDER BY tx DESC, id DESC LIMIT 1) p
      WHERE m.task = 'history_trim' AND EXISTS (SELECT 1 FROM place)
    )
    SELECT (SELECT count(*) FROM trimmed)::int AS trimmed, (SELECT count(*) FROM passed)::int AS examined`;
  return async (db: PgExecutor, keep: number, limit: number): Promise<HistoryTrimResult> => {
    const [row] = await db.query<{ trimmed: number; examined: number }>(text, [keep, limit]);
    return { trimmed: row!.trimmed, examined: row!.examined };
  };
}
