import type { Database } from 'better-sqlite3';
import type { JobRow } from '../../job-row.js';
import type { CheckedClaimParams } from '../../checked/store-params.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import { fromSqliteRow, type SqliteJobRow } from '../sqlite-row.js';
import { CLAIM_LEASE, claimCandidates, claimParams } from './claim-steps.sql.js';

/**
 * The claim while no concurrency limit exists: leases up to `limit` of the earliest candidates in
 * one statement. SQLite has one writer at a time, so no row locks are needed: the surrounding
 * IMMEDIATE transaction is the lock.
 */
export function claimUnlimitedQuery(db: Database, t: SqliteNaming) {
  const claim = db.prepare(`
    UPDATE ${t.jobs} SET ${CLAIM_LEASE}
    WHERE seq IN (SELECT seq FROM (${claimCandidates(t, '@limit', '')}) ORDER BY run_at, seq LIMIT @limit)
    RETURNING *`);
  return (params: CheckedClaimParams, now: number): JobRow[] =>
    (claim.all(claimParams(params, now)) as SqliteJobRow[]).map(fromSqliteRow).sort((a, b) => a.runAt - b.runAt || a.seq - b.seq);
}
