import type { FinishMode } from '../../../core/index.js';
import type { JobRow } from '../../job-row.js';
import type { OutcomeResult } from '../../job-store.js';
import type { CheckedClaimParams, NormalizedOutcome } from '../../checked/store-params.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { fromPgRow, type PgJobRow } from '../postgres-row.js';
import { claimValues } from './claim-steps.sql.js';
import { unlimitedClaimStatements, walkedOf, type ClaimCursorValues } from './claim-unlimited.query.js';
import { completeCtes, completeValues, releasingSql } from './complete-jobs.query.js';
import { outcomeResults } from './outcome-results.js';
import { laneClaimResult, laneClaimStatements, turnValues, type LaneClaimResult, type LaneClaimRow } from './claim-lanes-fair.query.js';
import type { RoundTurns } from './claim-limited.query.js';

/**
 * A worker's outcomes and its next claim in one statement, one round trip and one commit: the
 * fenced outcome write (complete-jobs.query.ts) and the unlimited claim (claim-unlimited.query.ts),
 * each as it is alone. The claim's parameters come first ($1 worker id, which the fence shares, $2
 * batch size, $3 lease, $4 lapsed search), the reports' arrays after them ($5 to $10).
 *
 * Both parts read one snapshot, and they never touch the same row: the outcomes apply to running
 * jobs whose lease is live at the statement's time, the claim takes due scheduled jobs and leases
 * that had lapsed by then. A job the outcomes reschedule to run at once is due for the next claim,
 * not this one. The statement's triggers fire once, for the rows of both parts. What the outcomes
 * did comes back on the first row alone: on every row it would be a batch of ids for each job
 * claimed, sent and parsed a hundred times over for a claim of 100 (2.5 times the statement's
 * own time).
 *
 * It is used only while the database has no limit: with one, a claim must count the slots and
 * starts the outcomes free, which the same snapshot cannot see, so the limited claim then runs
 * after the outcomes, in a transaction of its own (postgres-claim.ts). If a limit appeared since
 * the last claim, the claim part takes nothing and says so (`limited`), as the unlimited claim
 * does, and the outcomes are written all the same. The commit waits for its WAL flush, whatever
 * `asyncClaimCommit` says: it records outcomes.
 */
export function completeAndClaimQuery(t: PostgresNaming, finish: FinishMode = 'keep', releasing = false) {
  const select = (walk: string) => `
    SELECT c.*, l.yes AS limited${walk}${appliedColumns(t, releasing)}
    FROM limited l LEFT JOIN claimed c ON true`;
  // The same parameters in every text (an unused $4 included), so the reports stay at $5 on; a
  // cursor's arrays come after them.
  const statements = unlimitedClaimStatements(t, `${completeCtes(t, 5, finish)}, `, select, true, { priorities: '$11', runAts: '$12' });

  return async (
    db: PgExecutor,
    outcomes: readonly NormalizedOutcome[],
    params: CheckedClaimParams,
    cursor?: ClaimCursorValues,
  ): Promise<{ results: OutcomeResult[]; releasing: boolean; rows: JobRow[]; limited: boolean; walked: number | null }> => {
    const { withLapsed, dueOnly, fromCursor } = statements(params.queues);
    type Row = PgJobRow & AppliedRow & { limited: boolean; walked?: string | number | null };
    const values = [...claimValues(params), ...completeValues(outcomes)];
    const rows = await (params.includeLapsed
      ? db.query<Row>(withLapsed, values)
      : cursor
        ? db.query<Row>(fromCursor, [...values, cursor.priorities, cursor.runAts])
        : db.query<Row>(dueOnly, values));
    return {
      ...appliedOf(outcomes, rows[0]),
      rows: rows.filter((row) => row.id !== null).map(fromPgRow),
      limited: rows[0]?.limited === true,
      walked: walkedOf(rows[0]),
    };
  };
}

/**
 * The same, with the lane claim (claim-lanes-fair.query.ts) in place of the unlimited one, while
 * jobs wait in lanes and no limit exists: the reports at $5 to $10, the turn at $11 to $13. If a
 * limit appeared since the last claim, the claim part takes nothing and says so (`limited`).
 */
export function completeAndClaimLanesQuery(t: PostgresNaming, finish: FinishMode = 'keep', releasing = false) {
  const statements = laneClaimStatements(t, `${completeCtes(t, 5, finish)}, `, appliedColumns(t, releasing), { queue: '$11', key: '$12', group: '$13' });

  return async (
    db: PgExecutor,
    outcomes: readonly NormalizedOutcome[],
    params: CheckedClaimParams,
    turns: RoundTurns,
  ): Promise<{ results: OutcomeResult[]; releasing: boolean } & LaneClaimResult> => {
    const { withLapsed, dueOnly } = statements(params.queues);
    const rows = await db.query<LaneClaimRow & AppliedRow>(params.includeLapsed ? withLapsed : dueOnly, [...claimValues(params), ...completeValues(outcomes), ...turnValues(turns)]);
    return { ...appliedOf(outcomes, rows[0]), ...laneClaimResult(rows) };
  };
}

/** The columns {@link appliedColumns} adds, as a row carries them. */
interface AppliedRow {
  applied_ids: string[] | null;
  applied_states: string[] | null;
  releasing?: boolean | null;
}

/** What the outcomes did, read from the answer's first row, where alone they are sent. */
function appliedOf(outcomes: readonly NormalizedOutcome[], first: AppliedRow | undefined): { results: OutcomeResult[]; releasing: boolean } {
  const ids = first?.applied_ids ?? [];
  const states = first?.applied_states ?? [];
  return { results: outcomeResults(outcomes, ids.map((id, i) => ({ id, state: states[i]! }))), releasing: first?.releasing === true };
}

/** What the outcomes did, on the answer's first row alone (see completeAndClaimQuery). */
const appliedColumns = (t: PostgresNaming, releasing: boolean) => `,
      CASE WHEN row_number() OVER () = 1 THEN (SELECT array_agg(a.id::text) FROM applied a) END AS applied_ids,
      CASE WHEN row_number() OVER () = 1 THEN (SELECT array_agg(a.state) FROM applied a) END AS applied_states${
        releasing ? `,\n      CASE WHEN row_number() OVER () = 1 THEN ${releasingSql(t)} END AS releasing` : ''}`;
