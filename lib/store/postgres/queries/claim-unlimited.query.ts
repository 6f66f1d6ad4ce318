import type { JobRow } from '../../job-row.js';
import type { CheckedClaimParams } from '../../checked/store-params.js';
import type { PgExecutor } from '../pg-executor.js';
import { limitFunction } from '../postgres-limits.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { fromPgRow, jobColumns, type PgJobRow } from '../postgres-row.js';
import { claimAsyncCommit, claimCandidates, claimDue, claimLease, claimPaused, claimValues } from './claim-steps.sql.js';
import { perQueueList } from './queue-list.sql.js';

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
  const fastClaim = (steps: string, picked: string) => `
    WITH ${claimPaused(t)}, limited AS MATERIALIZED (
      SELECT ${limitFunction(t, 'limits_gate')}() AS yes
    ), ${steps}, picked AS (
      ${picked}
    ), claimed AS (
      ${claimLease(t)}
      RETURNING ${jobColumns('j')}
    )
    SELECT c.*, l.yes AS limited${asyncCommit} FROM limited l LEFT JOIN claimed c ON true`;
  const statements = perQueueList((listed) => ({
    withLapsed: fastClaim(
      claimCandidates(t, listed, 'id, priority, run_at, seq', 'NOT (SELECT yes FROM limited)'),
      'SELECT id FROM (SELECT * FROM due UNION ALL SELECT * FROM lapsed) c ORDER BY priority, run_at, seq LIMIT $2',
    ),
    dueOnly: fastClaim(claimDue(t, listed, 'id', 'NOT (SELECT yes FROM limited)'), 'SELECT id FROM due'),
  }));

  return async (db: PgExecutor, params: CheckedClaimParams): Promise<{ rows: JobRow[]; limited: boolean }> => {
    const { withLapsed, dueOnly } = statements(params.queues);
    const values = claimValues(params);
    const rows = await (params.includeLapsed
      ? db.query<PgJobRow & { limited: boolean }>(withLapsed, values)
      : db.query<PgJobRow & { limited: boolean }>(dueOnly, values.slice(0, 3)));
    return { rows: rows.filter((row) => row.id !== null).map(fromPgRow), limited: rows[0]?.limited === true };
  };
}
