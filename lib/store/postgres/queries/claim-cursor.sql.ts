import type { PostgresNaming } from '../postgres-naming.js';
import { claimQueue } from './claim-steps.sql.js';

/**
 * What a claim reads while a transaction holds back vacuum's horizon (claim-cursor.ts). A claimed
 * job leaves its entry in the claim index until vacuum removes it, and while some session's
 * snapshot may still see the job as scheduled, no scan may mark the entry dead either: every claim
 * reads from the start of each priority's range, so each one walks, and checks in the heap, every
 * job claimed since the horizon was held. That is the claim's cost growing by the minute.
 *
 * This due step reads each priority from a cursor instead: `$priorities` and `$runAts` (arrays of
 * the same length, priorities ascending) say from which run time on each priority is read, so the
 * scan starts past the entries of the jobs claimed before. It reads only the priorities listed; the
 * claim that searches lapsed leases (one per poll interval) still reads every priority from its
 * start, and finds what the cursor passes over (claim-cursor.ts says what that is).
 */
export const cursorDue = (
  t: PostgresNaming,
  listed: string,
  columns: string,
  limitCheck: string,
  cursor: { readonly priorities: string; readonly runAts: string },
) => `due AS (
      SELECT d.* FROM unnest(${cursor.priorities}::int[], ${cursor.runAts}::timestamptz[]) AS p(v, r) CROSS JOIN LATERAL (
        SELECT ${columns} FROM ${t.jobs} j
        WHERE state = 'scheduled' AND parked_key IS NULL AND priority = p.v AND run_at >= p.r AND run_at <= now() AND attempt < max_attempts
          AND ${claimQueue(listed)} AND ${limitCheck}
        ORDER BY run_at, seq
        LIMIT $2
        FOR NO KEY UPDATE OF j SKIP LOCKED
      ) d
      LIMIT $2
    )`;

/**
 * How many claim-index entries this statement read (`walked`): the server's count for its session
 * when the claim has finished (the count of `claimed` comes first, so the UPDATE and every scan
 * before it have run), less the count before it began ({@link claimWalkFrom}). The count is the
 * session's since its counts were last flushed, which happens at most once a second, between
 * transactions: read alone, it also holds every claim this connection sent in that second, and a
 * busy connection seemed to walk when it did not. An entry the scan had to check in the heap and
 * pass over counts as read; one an earlier scan marked dead does not. A claim that read many more
 * entries than it took walked the entries of claimed jobs that vacuum could not remove yet. With
 * `track_counts` off it reads 0, and claims never switch to the cursor.
 */
export const claimWalk = (t: PostgresNaming) =>
  `(SELECT ${entriesRead(t)} - w.n FROM walk_from w, (SELECT count(*) FROM claimed) done) AS walked`;

/**
 * The count before the claim reads the index, as a CTE, and the LIMIT of the step that picks the
 * claimed ids, which reads it: a LIMIT's count is evaluated when its node starts, before the node
 * asks its input for a row, so before any scan of the index. That step is the first the statement
 * runs (the UPDATE's id array).
 */
export const claimWalkFrom = (t: PostgresNaming) => `walk_from AS MATERIALIZED (SELECT ${entriesRead(t)} AS n)`;
export const WALK_FROM_LIMIT = '(SELECT $2::bigint FROM walk_from)';

const entriesRead = (t: PostgresNaming) => `pg_stat_get_xact_tuples_returned('${t.table('jobs_claim_idx')}'::regclass)`;
