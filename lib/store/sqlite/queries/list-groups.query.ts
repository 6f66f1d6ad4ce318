import type { Database } from 'better-sqlite3';
import type { DriverGroup, DriverGroupListParams } from '../../operator-reads.js';
import type { SqliteNaming } from '../sqlite-naming.js';

type Row = { group_key: string; due: number; later: number; oldest_due_at: number | null; max: number | null };

/**
 * Groups with scheduled jobs, in group order (see the PostgreSQL query): a loose scan of the group
 * index (migration 0025), one probe per group, each group's due and later jobs counted up to
 * @scan along it at @now, its first due entry the longest-waiting job, and its key's cap.
 */
export function listGroupsQuery(db: Database, t: SqliteNaming) {
  const scheduled = `j.state = 'scheduled' AND j.group_key IS NOT NULL`;
  const after = (bound: string) => `(SELECT j.group_key FROM ${t.jobs} j WHERE ${scheduled} AND j.group_key > ${bound} ORDER BY j.group_key LIMIT 1)`;
  const walk = (first: string) =>
    db.prepare(
      `WITH RECURSIVE waiting (group_key, n) AS (
         SELECT ${first}, 1
         UNION ALL
         SELECT ${after('g.group_key')}, g.n + 1 FROM waiting g WHERE g.group_key IS NOT NULL AND g.n < @limit
       )
       SELECT g.group_key,
         (SELECT count(*) FROM (SELECT 1 FROM ${t.jobs} j WHERE ${scheduled} AND j.group_key = g.group_key AND j.run_at <= @now LIMIT @scan)) AS due,
         (SELECT count(*) FROM (SELECT 1 FROM ${t.jobs} j WHERE ${scheduled} AND j.group_key = g.group_key AND j.run_at > @now LIMIT @scan)) AS later,
         (SELECT j.run_at FROM ${t.jobs} j WHERE ${scheduled} AND j.group_key = g.group_key AND j.run_at <= @now ORDER BY j.run_at, j.seq LIMIT 1) AS oldest_due_at,
         c.max
       FROM waiting g LEFT JOIN ${t.limits} c ON c.key = 'key:' || g.group_key
       WHERE g.group_key IS NOT NULL
       ORDER BY g.n`,
    );
  const first = walk(`(SELECT j.group_key FROM ${t.jobs} j WHERE ${scheduled} ORDER BY j.group_key LIMIT 1)`);
  const next = walk(after('@after'));
  return ({ limit, after: bound, countScan }: DriverGroupListParams, now: number): DriverGroup[] =>
    ((bound === null ? first.all({ limit, scan: countScan, now }) : next.all({ limit, scan: countScan, now, after: bound })) as Row[]).map((row) => ({
      group: row.group_key,
      due: row.due,
      later: row.later,
      oldestDueAt: row.oldest_due_at === null ? null : new Date(row.oldest_due_at),
      concurrencyMax: row.max,
    }));
}
