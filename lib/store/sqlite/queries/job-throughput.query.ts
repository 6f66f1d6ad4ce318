import type { Database } from 'better-sqlite3';
import type { JobState } from '../../../core/index.js';
import type { DriverThroughput } from '../../operator-reads.js';
import type { SqliteNaming } from '../sqlite-naming.js';

type Row = { kind: 'count' | 'read'; state: JobState | null; bucket: number | null; n: number; oldest: number | null };

/**
 * Finished jobs per bucket from `from` (buckets `bucketMs` wide), from one source: each source is
 * read newest first and stops at `scan` rows, succeeded and cancelled through jobs_finished_idx
 * (its predicate repeated word for word, as SQLite needs to use a partial index), dead-lettered
 * through jobs_dead_letter_idx. The queue filter applies to what was read, so a rare queue costs no
 * more than a common one. Instants are whole milliseconds here, so integer division floors exactly.
 */
export function jobThroughputQuery(db: Database, t: SqliteNaming) {
  const source = (where: string, order: string) =>
    db.prepare(`
      WITH r AS MATERIALIZED (
        SELECT state, queue, finished_at FROM ${t.jobs} WHERE ${where} AND finished_at >= @from ORDER BY ${order} LIMIT @scan
      )
      SELECT 'count' AS kind, state, CAST((finished_at - @from) / @bucket AS INTEGER) AS bucket, count(*) AS n, NULL AS oldest
      FROM r WHERE @queue IS NULL OR queue = @queue GROUP BY state, 3
      UNION ALL
      SELECT 'read', NULL, NULL, count(*), min(finished_at) FROM r`);
  const done = source(`state IN ('succeeded', 'cancelled')`, 'finished_at DESC');
  const dead = source(`state = 'dead_lettered'`, 'finished_at DESC, seq DESC');
  return (from: number, bucketMs: number, scan: number, queue: string | null): Omit<DriverThroughput, 'now'> => {
    const read = (statement: typeof done) => {
      const rows = statement.all({ from, bucket: bucketMs, scan, queue }) as Row[];
      const summary = rows.find((row) => row.kind === 'read')!;
      return {
        counts: rows.filter((row) => row.kind === 'count').map((row) => ({ bucket: row.bucket!, state: row.state!, count: row.n })),
        read: { rows: summary.n, oldest: summary.oldest },
      };
    };
    const fromDone = read(done);
    const fromDead = read(dead);
    return { counts: [...fromDone.counts, ...fromDead.counts], read: { done: fromDone.read, dead: fromDead.read } };
  };
}
