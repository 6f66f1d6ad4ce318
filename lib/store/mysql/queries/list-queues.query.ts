import type { DriverQueueListParams } from '../../operator-reads.js';
import { queueSummaries, type QueueCountRow, type QueueSummary } from '../../queue-summary.js';
import type { MysqlExecutor } from '../mysql-executor.js';
import type { MysqlNaming } from '../mysql-naming.js';
import { jobCountsSql } from './job-counts.sql.js';

/**
 * The rows of the queues `names` (distinct, at least one): each one's pause row and its counts per
 * state, the folded ones and the changes since, each read through its table's key by name (the
 * changes, few between folds, are read whole). A name with neither yields no row.
 */
async function rowsOfNames(db: MysqlExecutor, t: MysqlNaming, names: readonly string[]): Promise<QueueCountRow[]> {
  return db.query<QueueCountRow>(
    `SELECT k.queue AS name, NULL AS paused, k.state, SUM(k.n) AS count FROM (
       SELECT queue, state, count AS n FROM ${t.counts} WHERE queue IN (?)
       UNION ALL
       SELECT queue, state, delta FROM ${t.countDeltas} WHERE queue IN (?)
     ) k GROUP BY k.queue, k.state HAVING SUM(k.n) <> 0
     UNION ALL
     SELECT q.name, q.paused, NULL, NULL FROM ${t.queues} q WHERE q.name IN (?)`,
    [names, names, names],
  );
}

/**
 * Up to `limit` names after `after`, in order, that may be queues: from the counts' key (queue,
 * state) where a folded count is not zero and from the queues' key, each read in order and stopped
 * at `limit`, and from the unfolded changes, few between folds, read whole. A name whose changes
 * cancel its folded counts is among them, and lists nothing.
 */
async function pickNames(db: MysqlExecutor, t: MysqlNaming, after: string, limit: number): Promise<string[]> {
  const rows = await db.query<{ name: string }>(
    `SELECT picked.name FROM (
       (SELECT DISTINCT queue AS name FROM ${t.counts} WHERE queue > ? AND count <> 0 ORDER BY queue LIMIT ?)
       UNION (SELECT name FROM ${t.queues} WHERE name > ? ORDER BY name LIMIT ?)
       UNION (SELECT DISTINCT queue FROM ${t.countDeltas} WHERE queue > ?)
     ) picked ORDER BY picked.name LIMIT ?`,
    [after, limit, after, limit, after, limit],
  );
  return rows.map((row) => row.name);
}

/**
 * Every queue with a stored job or a pause row, with its pause state and job counts per state, from
 * the kept counts (job-counts.sql.ts): it never reads the jobs table. A page picks its names in
 * order first (pickNames), then reads the rows of those names alone, so it costs its size whatever
 * the number of queues; a picked name that turns out empty is made up for by picking on after the
 * last one. The named form reads the names it is given. Names are ASCII in a binary collation, so
 * the server's order is the one queueSummaries sorts by.
 */
export async function listQueues(db: MysqlExecutor, t: MysqlNaming, params: DriverQueueListParams): Promise<QueueSummary[]> {
  if (params.kind === 'all') {
    return queueSummaries(
      await db.query<QueueCountRow>(
        `SELECT c.queue AS name, NULL AS paused, c.state, c.count FROM ${jobCountsSql(t)} c
         UNION ALL
         SELECT q.name, q.paused, NULL, NULL FROM ${t.queues} q`,
      ),
    );
  }
  if (params.kind === 'named') return params.queues.length === 0 ? [] : queueSummaries(await rowsOfNames(db, t, params.queues));
  const found: QueueSummary[] = [];
  let after = params.after;
  for (;;) {
    const wanted = params.limit - found.length;
    const names = await pickNames(db, t, after, wanted);
    if (names.length > 0) found.push(...queueSummaries(await rowsOfNames(db, t, names)));
    if (names.length < wanted || found.length === params.limit) return found;
    after = names.at(-1)!;
  }
}
