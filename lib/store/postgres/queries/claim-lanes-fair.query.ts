import type { JobRow } from '../../job-row.js';
import type { CheckedClaimParams } from '../../checked/store-params.js';
import type { PgExecutor } from '../pg-executor.js';
import { limitFunction } from '../postgres-limits.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { fromPgRow, jobColumns, type PgJobRow } from '../postgres-row.js';
import { claimFairOrder, claimLaneCut, claimLaneJobs, claimLanes, claimLaneTake, claimTurnColumns, laneShared } from './claim-lanes.sql.js';
import { claimAsyncCommit, claimCandidates, claimDue, claimLease, claimPaused, claimValues } from './claim-steps.sql.js';
import { perQueueList } from './queue-list.sql.js';
import type { RoundTurns } from './claim-limited.query.js';

/** Where a lane claim's turn parameters are: the lane to read lanes after, and the group the last claim took last. */
export interface TurnParams {
  readonly queue: string;
  readonly key: string;
  readonly group: string;
}

/**
 * The lane claim's statements, two per queue list, built once: the claim while jobs wait in lanes
 * (groups' due jobs, docs/groups.md, or jobs a limit held back once) but no concurrency or rate
 * limit exists. It is the unlimited claim (claim-unlimited.query.ts) with the lanes read beside the
 * claim index: one statement, one round trip, no slots to count, so it composes with the outcome
 * write as the unlimited claim does (complete-and-claim.query.ts). A group's lane gives its share
 * of the batch, any other lane up to the batch (no limit holds it back any more), and the
 * candidates are taken in fair order (claim-lanes.sql.ts); a grouped job read from the claim index
 * that the batch had no turn for is parked in its group's lane.
 *
 * limits_exist, under the shared limits lock, gates every read: once a limit exists the statement
 * takes nothing and says so (`limited`), and the caller claims with the limited claim instead.
 * `prefix` comes first (CTEs, or ''), `extra` are more columns of the answer's rows. Both
 * statements read $1 to $4 ($4 in a one-time filter when lapsed leases are left out) and the turn
 * parameters `turn` names.
 */
export function laneClaimStatements(t: PostgresNaming, prefix: string, extra: string, turn: TurnParams) {
  const columns = 'id, priority, run_at, seq, queue, group_key';
  const gate = 'NOT (SELECT yes FROM limited)';
  return perQueueList((listed) => {
    const steps = (withLapsed: boolean) => `
    WITH ${prefix}${claimPaused(t)}, limited AS MATERIALIZED (
      SELECT ${limitFunction(t, 'limits_exist')}() AS yes
    ), ${withLapsed ? claimCandidates(t, listed, columns, gate) : claimDue(t, listed, columns, `${gate} AND $4::boolean IS NOT NULL`)},
    ${claimLanes(t, listed, turn)}, served AS (
      SELECT l.queue, l.key, l.key LIKE 'group:%' AS grp FROM lanes l WHERE ${gate}
    ), ${claimLaneTake('served', '$2')}, ${claimLaneJobs(t, columns, 'now()')}, ${claimLaneCut()}, candidates AS (
      SELECT c.* FROM (
        SELECT *, true AS parkable, NULL::text AS lane FROM due
        ${withLapsed ? 'UNION ALL SELECT *, false, NULL FROM lapsed' : ''}
        UNION ALL SELECT ${columns}, false, lane FROM lane_jobs
      ) c
      WHERE c.priority <= COALESCE((SELECT p FROM lane_cut), c.priority)
    ), ${claimFairOrder(turn.group)}, picked AS (
      SELECT o.id, o.ord, o.grp, o.queue, o.lane FROM ordered o ORDER BY o.ord LIMIT $2
    ), parked AS (
      -- A grouped job from the claim index that the batch had no turn for: parked in its group's lane.
      UPDATE ${t.jobs} j SET parked_key = 'group:' || o.group_key FROM ordered o
      WHERE j.id = o.id AND o.parkable AND o.group_key IS NOT NULL AND o.id NOT IN (SELECT id FROM picked)
    ), claimed AS (
      ${claimLease(t)}
      RETURNING ${jobColumns('j')}
    )
    SELECT c.*, l.yes AS limited, (SELECT count(*) FROM picked) < $2 AND ${laneShared()} AS more,
      ${claimTurnColumns()}${extra}
    FROM limited l LEFT JOIN claimed c ON true`;
    return { withLapsed: steps(true), dueOnly: steps(false) };
  });
}

/** What a lane claim leased, whether a limit stopped it, and where the next claim takes its turn from. */
export interface LaneClaimResult {
  readonly rows: JobRow[];
  readonly limited: boolean;
  /** A group's lane gave its whole share and the batch is not full: claim again at once. */
  readonly more: boolean;
  readonly turnGroup: string | null;
  readonly turnLane: { readonly queue: string; readonly key: string } | null;
}

/** The columns every lane claim answers with, besides the job's. */
export type LaneClaimRow = PgJobRow & { limited: boolean; more: boolean; turn_group: string | null; turn_lane: string[] | null };

/** Reads a lane claim's answer. */
export function laneClaimResult(rows: readonly LaneClaimRow[]): LaneClaimResult {
  const head = rows[0];
  return {
    rows: rows.filter((row) => row.id !== null).map(fromPgRow),
    limited: head?.limited === true,
    more: head?.more === true,
    turnGroup: head?.turn_group ?? null,
    turnLane: head?.turn_lane ? { queue: head.turn_lane[0]!, key: head.turn_lane[1]! } : null,
  };
}

/** The turn parameters' values, in order. */
export const turnValues = (turns: RoundTurns) => [turns.laneAfter?.queue ?? null, turns.laneAfter?.key ?? null, turns.after];

/** The lane claim alone: $1 to $4 as the unlimited claim's, the turn at $5 to $7. */
export function claimLanesQuery(t: PostgresNaming, options: { readonly asyncCommit?: boolean } = {}) {
  const statements = laneClaimStatements(t, '', claimAsyncCommit(options.asyncCommit === true), { queue: '$5', key: '$6', group: '$7' });
  return async (db: PgExecutor, params: CheckedClaimParams, turns: RoundTurns): Promise<LaneClaimResult> => {
    const { withLapsed, dueOnly } = statements(params.queues);
    return laneClaimResult(await db.query<LaneClaimRow>(params.includeLapsed ? withLapsed : dueOnly, [...claimValues(params), ...turnValues(turns)]));
  };
}
