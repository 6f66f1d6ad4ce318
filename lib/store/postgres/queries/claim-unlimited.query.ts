import type { JobRow } from '../../job-row.js';
import type { CheckedClaimParams } from '../../checked/store-params.js';
import type { PgExecutor } from '../pg-executor.js';
import { limitFunction } from '../postgres-limits.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { fromPgRow, jobColumns, type PgJobRow } from '../postgres-row.js';
import { claimAsyncCommit, claimCandidates, claimDue, claimLease, claimPaused, claimValues } from './claim-steps.sql.js';
import { perQueueList } from './queue-list.sql.js';
import { claimWalk, claimWalkFrom, cursorDue, WALK_FROM_LIMIT } from './claim-cursor.sql.js';

/**
 * The claim for a database with no limit at all, which is most of them: leases up to $2 jobs in
 * one statement, with no slot bookkeeping to plan or run. If a limit exists it claims nothing and
 * says so (`limited`), and the caller claims with claim-limited.query.ts instead
 * (postgres-claim.ts). Whether one exists is read by limits_gate, after it took the limits lock:
 * this statement's own snapshot may predate a limit that committed since, and a claim that went by
 * it would start a job the new limit's count of running jobs did not see.
 *
 * A claim that leaves lapsed leases out (all but one per poll interval) has a statement of its own,
 * with no lapsed step to start and end and no union to sort, only the due jobs in index order:
 * a one-job claim at idle is mostly fixed cost, setting up and tearing down every step of the
 * plan, run or not.
 */
export function claimUnlimitedQuery(t: PostgresNaming, options: { readonly asyncCommit?: boolean } = {}) {
  const asyncCommit = claimAsyncCommit(options.asyncCommit === true);
  const statements = unlimitedClaimStatements(
    t,
    '',
    (walk) => `
    SELECT c.*, l.yes AS limited${walk}${asyncCommit} FROM limited l LEFT JOIN claimed c ON true`,
    false,
    { priorities: '$4', runAts: '$5' },
  );

  return async (db: PgExecutor, params: CheckedClaimParams, cursor?: ClaimCursorValues): Promise<UnlimitedClaimResult> => {
    const { withLapsed, dueOnly, fromCursor } = statements(params.queues);
    const values = claimValues(params);
    const rows = await (params.includeLapsed
      ? db.query<ClaimRow>(withLapsed, values)
      : cursor
        ? db.query<ClaimRow>(fromCursor, [...values.slice(0, 3), cursor.priorities, cursor.runAts])
        : db.query<ClaimRow>(dueOnly, values.slice(0, 3)));
    return {
      rows: rows.filter((row) => row.id !== null).map(fromPgRow),
      limited: rows[0]?.limited === true,
      walked: walkedOf(rows[0]),
    };
  };
}

type ClaimRow = PgJobRow & { limited: boolean; walked?: string | number | null };

/** The claim-index entries a claim that searched lapsed leases read; null for any other claim. */
export const walkedOf = (row: { walked?: string | number | null } | undefined): number | null =>
  row?.walked === undefined || row.walked === null ? null : Number(row.walked);

/** What an unlimited claim leased, whether a limit stopped it, and (searching lapsed leases) how many claim-index entries it read. */
export interface UnlimitedClaimResult {
  readonly rows: JobRow[];
  readonly limited: boolean;
  readonly walked: number | null;
}

/** A claim cursor's parameters (claim-cursor.ts): priorities ascending, and the run time each is read from. */
export interface ClaimCursorValues {
  readonly priorities: readonly number[];
  readonly runAts: readonly string[];
}

/**
 * The unlimited claim's statements, three per queue list, built once: the paused queues, the
 * limit gate, the candidates, the picks and the leasing UPDATE (its rows in `claimed`), after
 * `prefix` (CTEs that come first, or '') and before `select`, which is given the column that
 * counts the claim-index entries read (claim-cursor.sql.ts) for `withLapsed` alone, and '' for the
 * others. `withLapsed` also takes lapsed leases ($4), `dueOnly` leaves that step out; both read $1 to $4 (dueOnly reads $4 in a one-time
 * filter when `keepLapsedParam`, so a statement with parameters after it keeps their numbers).
 * `fromCursor` is `dueOnly` reading each priority from a cursor, whose arrays are the parameters
 * `cursor` names (claim-cursor.sql.ts).
 */
export function unlimitedClaimStatements(
  t: PostgresNaming,
  prefix: string,
  select: (walk: string) => string,
  keepLapsedParam: boolean,
  cursor: { readonly priorities: string; readonly runAts: string },
) {
  const steps = (candidates: string, picked: string, walk = '') => `
    WITH ${prefix}${claimPaused(t)}, limited AS MATERIALIZED (
      SELECT ${limitFunction(t, 'limits_gate')}() AS yes
    ), ${candidates}, picked AS (
      ${picked}
    ), claimed AS (
      ${claimLease(t)}
      RETURNING ${jobColumns('j')}
    )${select(walk)}`;
  const gate = 'NOT (SELECT yes FROM limited)';
  return perQueueList((listed) => ({
    withLapsed: steps(
      `${claimWalkFrom(t)}, ${claimCandidates(t, listed, 'id, priority, run_at, seq', gate)}`,
      `SELECT id FROM (SELECT * FROM due UNION ALL SELECT * FROM lapsed) c ORDER BY priority, run_at, seq LIMIT ${WALK_FROM_LIMIT}`,
      `, ${claimWalk(t)}`,
    ),
    dueOnly: steps(claimDue(t, listed, 'id', keepLapsedParam ? `${gate} AND $4::boolean IS NOT NULL` : gate), 'SELECT id FROM due'),
    fromCursor: steps(cursorDue(t, listed, 'id', keepLapsedParam ? `${gate} AND $4::boolean IS NOT NULL` : gate, cursor), 'SELECT id FROM due'),
  }));
}
