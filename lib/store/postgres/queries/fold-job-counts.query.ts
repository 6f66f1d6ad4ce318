import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

/**
 * Moves up to $1 rows of pending count changes into the counts, in one statement: the rows it
 * deletes are summed per (queue, state) and added to their counts, so any snapshot sees them on
 * one side or the other. A transaction-scoped try-lock lets one fold run at a time: a fold (or a
 * count read's fold) that finds it taken moves nothing and returns at once, so nothing ever waits
 * on a fold and no two folds take count rows in opposite orders. Counts that reached zero are
 * dropped (those this fold does not add to), so a queue that is gone leaves no rows behind.
 * Returns how many change rows it moved.
 */
export function foldJobCountsQuery(t: PostgresNaming) {
  const text = `
    WITH folder AS MATERIALIZED (
      SELECT pg_try_advisory_xact_lock(hashtext($2)) AS elected
    ), moved AS (
      DELETE FROM ${t.countDeltas}
      WHERE (SELECT elected FROM folder)
        AND ctid = ANY(ARRAY(SELECT ctid FROM ${t.countDeltas} LIMIT $1 FOR UPDATE SKIP LOCKED))
      RETURNING queue, state, delta
    ), summed AS (
      SELECT queue, state, sum(delta) AS delta FROM moved GROUP BY queue, state
    ), added AS (
      INSERT INTO ${t.counts} AS c (queue, state, count)
      SELECT queue, state, delta FROM summed WHERE delta <> 0 ORDER BY queue, state
      ON CONFLICT (queue, state) DO UPDATE SET count = c.count + excluded.count
    ), emptied AS (
      DELETE FROM ${t.counts} z
      WHERE (SELECT elected FROM folder) AND z.count = 0
        AND NOT EXISTS (SELECT 1 FROM summed s WHERE s.queue = z.queue AND s.state = z.state)
    )
    SELECT count(*)::int AS folded FROM moved`;
  return async (db: PgExecutor, limit: number): Promise<number> =>
    (await db.query<{ folded: number }>(text, [limit, `${t.lockKey}:counts`]))[0]!.folded;
}

/** Pending rows a count read folds first (see foldBeforeRead). */
const READ_FOLD_LIMIT = 10_000;
/** SQLSTATE read_only_sql_transaction: a standby, or a read-only session. */
const READ_ONLY_TRANSACTION = '25006';

/**
 * A count read sums the counts and every change not folded yet, so it folds a bounded batch
 * first: while no worker's maintenance folds (none runs), each read still shrinks the backlog it
 * would otherwise sum again. It never waits for a fold that is running (the fold's try-lock), and
 * on a read-only connection (a standby) it just reads.
 */
export async function foldBeforeRead(fold: ReturnType<typeof foldJobCountsQuery>, db: PgExecutor): Promise<void> {
  await fold(db, READ_FOLD_LIMIT).catch((error: { code?: string }) => {
    if (error?.code !== READ_ONLY_TRANSACTION) throw error;
  });
}
