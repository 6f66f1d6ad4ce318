import type { JobState } from '../../../core/index.js';
import type { DriverThroughput, ThroughputSource } from '../../operator-reads.js';
import type { MysqlExecutor } from '../mysql-executor.js';
import { fromMysqlInstant, toMysqlInstant } from '../mysql-instant.js';
import type { MysqlNaming } from '../mysql-naming.js';

type Row = { source: ThroughputSource; state: JobState; bucket: number; matches: number; n: number; oldest: string };

/**
 * The newest jobs of one state finished at or after the window's start, up to the scan bound (its
 * two parameters), with their queues, read backwards through jobs_finished_idx (state,
 * finished_at, seq, queue) alone.
 */
const newest = (t: MysqlNaming, state: JobState) =>
  `(SELECT '${state}' AS state, f.seq, f.finished_at, f.queue FROM ${t.jobs} f FORCE INDEX (jobs_finished_idx)
     WHERE f.state = '${state}' AND f.finished_at >= ? ORDER BY f.finished_at DESC, f.seq DESC LIMIT ?)`;

/**
 * Finished jobs per bucket from `from` (buckets `bucketMs` wide), from the two sources
 * operator-reads.ts names, each read newest first and stopped at `scan` rows: `done` is the newest
 * `scan` of the succeeded and the cancelled jobs, merged from one range of jobs_finished_idx each
 * (the index keys the state first, so the two ranges cannot be read as one), and `dead` the newest
 * `scan` dead-lettered ones. What is read is grouped by source, state, bucket and whether its queue
 * matches `queue`, so one pass gives both the counts and what each source read. The queue comes
 * from the index too, so a queue filter reads no table row (a lookup per job read would be most
 * of the read's time at 50,000 jobs). Bucket numbers count whole milliseconds from `from`
 * (TIMESTAMPDIFF is exact for DATETIME(3)), floored by DIV.
 */
export async function jobThroughput(db: MysqlExecutor, t: MysqlNaming, from: number, bucketMs: number, scan: number, queue: string | null): Promise<Omit<DriverThroughput, 'now'>> {
  const since = toMysqlInstant(from);
  const matches = queue === null ? '1' : 'r.queue = ?';
  const rows = await db.query<Row>(
    `SELECT r.source, r.state, TIMESTAMPDIFF(MICROSECOND, ?, r.finished_at) DIV 1000 DIV ? AS bucket, ${matches} AS matches,
       COUNT(*) AS n, MIN(r.finished_at) AS oldest
     FROM (
       SELECT 'done' AS source, d.state, d.seq, d.finished_at, d.queue FROM (
         ${newest(t, 'succeeded')} UNION ALL ${newest(t, 'cancelled')} ORDER BY finished_at DESC, seq DESC LIMIT ?
       ) d
       UNION ALL
       SELECT 'dead', e.state, e.seq, e.finished_at, e.queue FROM ${newest(t, 'dead_lettered')} e
     ) r
     GROUP BY r.source, r.state, bucket, matches`,
    [since, bucketMs, ...(queue === null ? [] : [queue]), since, scan, since, scan, scan, since, scan],
  );
  const read = { done: { rows: 0, oldest: null as number | null }, dead: { rows: 0, oldest: null as number | null } };
  const counts: { bucket: number; state: JobState; count: number }[] = [];
  for (const row of rows) {
    const n = Number(row.n);
    const oldest = fromMysqlInstant(row.oldest).getTime();
    const source = read[row.source];
    source.rows += n;
    source.oldest = source.oldest === null ? oldest : Math.min(source.oldest, oldest);
    if (Number(row.matches) === 1) counts.push({ bucket: Number(row.bucket), state: row.state, count: n });
  }
  return { counts, read };
}
