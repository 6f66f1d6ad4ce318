import type { JobState } from '../../../core/index.js';
import type { DriverThroughput } from '../../operator-reads.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

type Row = { kind: 'count' | 'done' | 'dead'; state: JobState | null; bucket: number | null; n: number; oldest: string | null };

/** The store's clock in whole epoch milliseconds, truncated as instants read back are. */
const NOW = `SELECT floor(extract(epoch FROM now()) * 1000) AS now`;

/**
 * Finished jobs per bucket from $1 (epoch ms, buckets $2 ms wide), after ORDERED_READ_SETTINGS in
 * the caller's transaction. Each source is read newest first and stops at $3 rows: succeeded and
 * cancelled through jobs_finished_idx (its predicate repeated here word for word, so the planner
 * can use it), dead-lettered through jobs_dead_letter_idx. The queue filter ($4) applies to what
 * was read, so a rare queue costs no more than a common one. extract() is numeric, so a job that
 * finished on a bucket's first microsecond lands in that bucket, not the one before.
 */
export function jobThroughputQuery(t: PostgresNaming) {
  const since = `to_timestamp($1::float8 / 1000)`;
  const text = `
    WITH done AS MATERIALIZED (
      SELECT j.state, j.queue, j.finished_at FROM ${t.jobs} j
      WHERE j.state IN ('succeeded', 'cancelled') AND j.finished_at >= ${since}
      ORDER BY j.finished_at DESC LIMIT $3
    ), dead AS MATERIALIZED (
      SELECT j.state, j.queue, j.finished_at FROM ${t.jobs} j
      WHERE j.state = 'dead_lettered' AND j.finished_at >= ${since}
      ORDER BY j.finished_at DESC, j.seq DESC LIMIT $3
    )
    SELECT 'count' AS kind, c.state, floor((extract(epoch FROM c.finished_at) * 1000 - $1::numeric) / $2::numeric)::integer AS bucket,
      count(*)::integer AS n, NULL::numeric AS oldest
    FROM (SELECT * FROM done UNION ALL SELECT * FROM dead) c
    WHERE $4::text IS NULL OR c.queue = $4::text
    GROUP BY c.state, 3
    UNION ALL
    SELECT 'done', NULL, NULL, count(*)::integer, floor(extract(epoch FROM min(finished_at)) * 1000) FROM done
    UNION ALL
    SELECT 'dead', NULL, NULL, count(*)::integer, floor(extract(epoch FROM min(finished_at)) * 1000) FROM dead`;
  return {
    /** The clock the window is cut by; read in the same transaction as the counts, so both see one `now()`. */
    now: async (db: PgExecutor): Promise<number> => Number((await db.query<{ now: string }>(NOW))[0]!.now),
    counts: async (db: PgExecutor, from: number, bucketMs: number, scan: number, queue: string | null): Promise<Omit<DriverThroughput, 'now'>> => {
      const rows = await db.query<Row>(text, [from, bucketMs, scan, queue]);
      const read = (kind: 'done' | 'dead') => {
        const row = rows.find((r) => r.kind === kind)!;
        return { rows: row.n, oldest: row.oldest === null ? null : Number(row.oldest) };
      };
      return {
        counts: rows.filter((row) => row.kind === 'count').map((row) => ({ bucket: row.bucket!, state: row.state!, count: row.n })),
        read: { done: read('done'), dead: read('dead') },
      };
    },
  };
}
