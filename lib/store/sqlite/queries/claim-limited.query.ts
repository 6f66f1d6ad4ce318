import type { Database } from 'better-sqlite3';
import type { JobRow } from '../../job-row.js';
import { limitKeysOf, pickWithinLimits } from '../../limit-room.js';
import type { CheckedClaimParams } from '../../checked/store-params.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import { fromSqliteRow, type SqliteJobRow } from '../sqlite-row.js';
import { CLAIM_LEASE, claimCandidateReader, claimParams } from './claim-steps.sql.js';

/**
 * The claim while a concurrency limit exists: counts what runs with a live lease per capped queue
 * and key, passes over jobs whose cap is reached (so they cannot starve others), and takes no more
 * than the room left, counting its own picks as it goes. Inside the write transaction nothing else
 * runs, so the counts stay true until it commits.
 */
export function claimLimitedQuery(db: Database, t: SqliteNaming) {
  const limits = db.prepare(`SELECT key, max FROM ${t.limits}`);
  const runningByQueue = db.prepare(`SELECT 'queue:' || queue AS key, count(*) AS n FROM ${t.jobs} WHERE state = 'running' AND leased_until > @now GROUP BY queue`);
  const runningByKey = db.prepare(
    `SELECT 'key:' || concurrency_key AS key, count(*) AS n FROM ${t.jobs} WHERE state = 'running' AND leased_until > @now AND concurrency_key IS NOT NULL GROUP BY concurrency_key`,
  );
  const saturated = (column: string, prefix: string) =>
    `AND NOT EXISTS (SELECT 1 FROM ${t.limits} l WHERE l.key = '${prefix}' || ${column} AND l.max <= (
        SELECT count(*) FROM ${t.jobs} r WHERE r.state = 'running' AND r.leased_until > @now AND '${prefix}' || r.${column} = l.key))`;
  const candidates = claimCandidateReader(db, t, `${saturated('queue', 'queue:')} ${saturated('concurrency_key', 'key:')}`);
  const candidateRows = db.prepare(`SELECT * FROM ${t.jobs} WHERE seq IN (SELECT value FROM json_each(@seqs))`);
  const leaseOne = db.prepare(`UPDATE ${t.jobs} SET ${CLAIM_LEASE} WHERE seq = @seq RETURNING *`);

  return (params: CheckedClaimParams, now: number): JobRow[] => {
    const base = claimParams(params, now);
    const max = new Map((limits.all() as { key: string; max: number }[]).map((l) => [l.key, l.max]));
    const running = new Map<string, number>();
    for (const row of [...runningByQueue.all({ now }), ...runningByKey.all({ now })] as { key: string; n: number }[]) running.set(row.key, row.n);
    const window = candidates(base, params.limit * 4);
    const rows = window.length === 0 ? [] : (candidateRows.all({ seqs: JSON.stringify(window.map((c) => c.seq)) }) as SqliteJobRow[]);
    rows.sort((a, b) => a.priority - b.priority || a.run_at - b.run_at || a.seq - b.seq);
    return pickWithinLimits(rows, (row) => limitKeysOf(row.queue, row.concurrency_key), max, running, params.limit).map((row) =>
      fromSqliteRow(leaseOne.get({ ...base, seq: row.seq }) as SqliteJobRow),
    );
  };
}
