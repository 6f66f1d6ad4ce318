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
 * How many claim-index entries this statement's transaction read (`walked`), counted once the
 * claim has finished: the count of `claimed` comes first, so the UPDATE and every scan before it
 * have run. An entry the scan had to check in the heap and pass over counts as read; one an earlier
 * scan marked dead does not. A claim that read many more entries than it took walked the entries
 * of claimed jobs that vacuum could not remove yet. With `track_counts` off it reads 0, and claims
 * never switch to the cursor.
 */
export const claimWalk = (t: PostgresNaming) =>
  `(SELECT pg_stat_get_xact_tuples_returned('${t.table('jobs_claim_idx')}'::regclass) FROM (SELECT count(*) FROM claimed) done) AS walked`;
