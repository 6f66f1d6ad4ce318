import type { JobState } from '../../../core/index.js';
import type { ConcurrencyLimit, HistoryEntry, ObserverLease, ParentOutput } from '../../job-store.js';
import { limitOf } from '../../effect-params.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { settleFunction } from '../postgres-effects.js';

interface PgHistoryRow {
  id: string;
  tx: string;
  job_id: string;
  name: string;
  at: Date;
  state: JobState;
  attempt: number;
  error: string | null;
}

const entry = (row: PgHistoryRow): HistoryEntry => ({
  id: Number(row.id),
  position: `${row.tx}:${row.id}`,
  jobId: row.job_id,
  name: row.name,
  at: row.at,
  state: row.state,
  attempt: row.attempt,
  error: row.error,
});

/** The statements behind dependencies, limits, history, observers and retention. */
export function effectsQueries(t: PostgresNaming) {
  const historyColumns = 'id, tx::text AS tx, job_id, name, at, state, attempt, error';
  return {
    /** Walks the job's ancestors (parents, their parents, ...) and returns the one asked for. */
    parentOutput: async (db: PgExecutor, jobId: string, ancestorId: string): Promise<ParentOutput> => {
      const [row] = await db.query<{ output: string | null }>(
        `WITH RECURSIVE ancestors(id) AS (
           SELECT parent_id FROM ${t.dependencies} WHERE child_id = $1
           UNION
           SELECT d.parent_id FROM ${t.dependencies} d JOIN ancestors a ON d.child_id = a.id
         )
         SELECT j.output::text AS output FROM ${t.jobs} j WHERE j.id = $2 AND j.id IN (SELECT id FROM ancestors)`,
        [jobId, ancestorId],
      );
      return row && row.output !== null ? { found: true, output: JSON.parse(row.output) as unknown } : { found: false, output: undefined };
    },

    settle: async (db: PgExecutor, limit: number): Promise<number> => {
      const [row] = await db.query<{ settled: number }>(`SELECT ${settleFunction(t)}(NULL, $1) AS settled`, [limit]);
      return row!.settled;
    },

    listLimits: async (db: PgExecutor): Promise<ConcurrencyLimit[]> =>
      (await db.query<{ key: string; max: number }>(`SELECT key, max FROM ${t.limits} ORDER BY key`)).map((r) => limitOf(r.key, r.max)),

    history: async (db: PgExecutor, jobId: string): Promise<HistoryEntry[]> =>
      (await db.query<PgHistoryRow>(`SELECT ${historyColumns} FROM ${t.history} WHERE job_id = $1 ORDER BY id`, [jobId])).map(entry),

    historyRead: async (db: PgExecutor, after: string, limit: number): Promise<HistoryEntry[]> => {
      const [tx, id] = after.split(':');
      return (
        await db.query<PgHistoryRow>(
          `SELECT ${historyColumns} FROM ${t.history}
           WHERE (tx, id) > ($1::xid8, $2::bigint) AND tx < pg_snapshot_xmin(pg_current_snapshot())
           ORDER BY tx, id LIMIT $3`,
          [tx, id, limit],
        )
      ).map(entry);
    },

    /** Deletes entries beyond the newest `keep` of each job, but none an observer has not passed yet. */
    historyTrim: async (db: PgExecutor, keep: number, limit: number): Promise<number> => {
      const rows = await db.query(
        `WITH ranked AS (
           SELECT id, tx, row_number() OVER (PARTITION BY job_id ORDER BY id DESC) AS n FROM ${t.history}
         ), doomed AS (
           SELECT tx, id FROM ranked r
           WHERE n > $1 AND NOT EXISTS (SELECT 1 FROM ${t.cursors} c WHERE (r.tx, r.id) > (c.last_tx, c.last_id))
           LIMIT $2
         )
         DELETE FROM ${t.history} WHERE (tx, id) IN (SELECT tx, id FROM doomed) RETURNING id`,
        [keep, limit],
      );
      return rows.length;
    },

    observerLease: async (db: PgExecutor, observer: string, workerId: string, leaseMs: number): Promise<ObserverLease | null> => {
      // A new cursor starts at the end of the log: after every entry whose transaction has finished.
      const [row] = await db.query<{ last_tx: string; last_id: string; failures: number }>(
        `INSERT INTO ${t.cursors} AS c (observer, last_tx, last_id, leased_by, leased_until)
         VALUES ($1, pg_snapshot_xmin(pg_current_snapshot()), 0, $2, now() + $3 * interval '1 millisecond')
         ON CONFLICT (observer) DO UPDATE SET leased_by = $2, leased_until = now() + $3 * interval '1 millisecond', updated_at = now()
         WHERE (c.leased_by IS NULL OR c.leased_by = $2 OR c.leased_until <= now()) AND (c.retry_at IS NULL OR c.retry_at <= now())
         RETURNING c.last_tx::text AS last_tx, c.last_id, c.failures`,
        [observer, workerId, leaseMs],
      );
      return row ? { observer, position: `${row.last_tx}:${row.last_id}`, failures: row.failures } : null;
    },

    observerCommit: async (db: PgExecutor, observer: string, workerId: string, position: string): Promise<boolean> => {
      const [tx, id] = position.split(':');
      const forward = `($3::xid8, $4::bigint) > (last_tx, last_id)`;
      const rows = await db.query(
        `UPDATE ${t.cursors} SET
           last_tx = CASE WHEN ${forward} THEN $3::xid8 ELSE last_tx END,
           last_id = CASE WHEN ${forward} THEN $4::bigint ELSE last_id END,
           failures = 0, retry_at = NULL, last_error = NULL, updated_at = now()
         WHERE observer = $1 AND leased_by = $2 AND leased_until > now() RETURNING observer`,
        [observer, workerId, tx, id],
      );
      return rows.length === 1;
    },

    observerFail: async (db: PgExecutor, observer: string, workerId: string, error: string, retryDelayMs: number): Promise<boolean> =>
      (
        await db.query(
          `UPDATE ${t.cursors} SET failures = failures + 1, retry_at = now() + $4 * interval '1 millisecond', last_error = $3,
             leased_by = NULL, leased_until = NULL, updated_at = now()
           WHERE observer = $1 AND leased_by = $2 AND leased_until > now() RETURNING observer`,
          [observer, workerId, error, retryDelayMs],
        )
      ).length === 1,

    /**
     * Deletes finished (succeeded or cancelled) jobs older than the cutoff whose dependants have
     * all been settled, with their history and their edges, in one bounded statement.
     */
    purge: async (db: PgExecutor, olderThanMs: number, limit: number): Promise<number> => {
      const rows = await db.query(
        `WITH doomed AS (
           SELECT id FROM ${t.jobs} j
           WHERE state IN ('succeeded', 'cancelled') AND finished_at < now() - $1 * interval '1 millisecond'
             AND NOT EXISTS (SELECT 1 FROM ${t.dependencies} d WHERE d.parent_id = j.id AND NOT d.settled)
           ORDER BY finished_at LIMIT $2
           FOR UPDATE SKIP LOCKED
         ), history AS (
           DELETE FROM ${t.history} WHERE job_id IN (SELECT id FROM doomed)
         ), edges AS (
           DELETE FROM ${t.dependencies} WHERE child_id IN (SELECT id FROM doomed) OR parent_id IN (SELECT id FROM doomed)
         )
         DELETE FROM ${t.jobs} WHERE id IN (SELECT id FROM doomed) RETURNING id`,
        [olderThanMs, limit],
      );
      return rows.length;
    },
  };
}
