import type { Database } from 'better-sqlite3';
import { claimOrder, type JobRow } from '../../job-row.js';
import type { CheckedClaimParams } from '../../checked/store-params.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import { fromSqliteRow, type SqliteJobRow } from '../sqlite-row.js';
import { CLAIM_LEASE, claimCandidateReader, claimParams } from './claim-steps.sql.js';

/**
 * The claim while no concurrency limit exists: reads the earliest candidates in claim order and
 * leases them in one statement. SQLite has one writer at a time, so no row locks are needed: the
 * surrounding IMMEDIATE transaction is the lock, and nothing changes between read and write.
 */
export function claimUnlimitedQuery(db: Database, t: SqliteNaming) {
  const candidates = claimCandidateReader(db, t, '');
  const lease = db.prepare(`UPDATE ${t.jobs} SET ${CLAIM_LEASE} WHERE seq IN (SELECT value FROM json_each(@seqs)) RETURNING *`);
  return (params: CheckedClaimParams, now: number): JobRow[] => {
    const base = claimParams(params, now);
    const picked = candidates(base, params.limit);
    if (picked.length === 0) return [];
    const rows = lease.all({ ...base, seqs: JSON.stringify(picked.map((c) => c.seq)) }) as SqliteJobRow[];
    return rows.map(fromSqliteRow).sort(claimOrder);
  };
}
