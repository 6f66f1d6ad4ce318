import type { MysqlNaming } from '../mysql-naming.js';

/**
 * Stored jobs per (queue, state), as a derived table: the folded counts plus the changes not folded
 * yet, read in the statement's one snapshot, so a fold committing meanwhile is seen whole or not at
 * all. Pairs with no job are left out. It reads the two small count tables, never the jobs.
 */
export function jobCountsSql(t: MysqlNaming): string {
  return `(
    SELECT kept.queue, kept.state, SUM(kept.n) AS count FROM (
      SELECT queue, state, count AS n FROM ${t.counts}
      UNION ALL
      SELECT queue, state, delta FROM ${t.countDeltas}
    ) kept GROUP BY kept.queue, kept.state HAVING SUM(kept.n) <> 0
  )`;
}
