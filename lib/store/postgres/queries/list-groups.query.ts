import type { DriverGroup, DriverGroupListParams } from '../../operator-reads.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

type Row = { group_key: string; due: string; later: string; oldest_due_at: Date | null; max: number | null };

/**
 * Groups with scheduled jobs, in group order, through the group index (migration 0025). The groups
 * come from a loose index scan, one probe for the next group after the last one, so a page costs
 * its size however deep each backlog is; each group's due and later jobs are counted up to $2 along
 * the same index, split at now by run time, and the first due entry is its longest-waiting job.
 * The cap is the concurrency limit on the group's key ('key:' and the group).
 */
export function listGroupsQuery(t: PostgresNaming) {
  const scheduled = `j.state = 'scheduled' AND j.group_key IS NOT NULL`;
  const text = (bounded: boolean) => `
    WITH RECURSIVE waiting(group_key, n) AS (
      (SELECT j.group_key, 1 FROM ${t.jobs} j WHERE ${scheduled}${bounded ? ' AND j.group_key > $3' : ''} ORDER BY j.group_key LIMIT 1)
      UNION ALL
      SELECT (SELECT j.group_key FROM ${t.jobs} j WHERE ${scheduled} AND j.group_key > g.group_key ORDER BY j.group_key LIMIT 1), g.n + 1
      FROM waiting g WHERE g.group_key IS NOT NULL AND g.n < $1
    )
    SELECT g.group_key,
      (SELECT count(*) FROM (SELECT 1 FROM ${t.jobs} j WHERE ${scheduled} AND j.group_key = g.group_key AND j.run_at <= now() LIMIT $2) d) AS due,
      (SELECT count(*) FROM (SELECT 1 FROM ${t.jobs} j WHERE ${scheduled} AND j.group_key = g.group_key AND j.run_at > now() LIMIT $2) l) AS later,
      (SELECT j.run_at FROM ${t.jobs} j WHERE ${scheduled} AND j.group_key = g.group_key AND j.run_at <= now() ORDER BY j.run_at, j.seq LIMIT 1) AS oldest_due_at,
      c.max
    FROM waiting g LEFT JOIN ${t.limits} c ON c.key = 'key:' || g.group_key
    WHERE g.group_key IS NOT NULL
    ORDER BY g.n`;
  const first = text(false);
  const next = text(true);
  return async (db: PgExecutor, { limit, after, countScan }: DriverGroupListParams): Promise<DriverGroup[]> =>
    (await (after === null ? db.query<Row>(first, [limit, countScan]) : db.query<Row>(next, [limit, countScan, after]))).map((row) => ({
      group: row.group_key,
      due: Number(row.due),
      later: Number(row.later),
      oldestDueAt: row.oldest_due_at,
      concurrencyMax: row.max,
    }));
}
