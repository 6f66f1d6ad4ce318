import type { Database } from 'better-sqlite3';
import type { CheckedClaimParams } from '../../store-params.js';
import type { JobRow } from '../../job-row.js';
import { limitKeysOf, pickWithinLimits } from '../../limit-room.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import { fromSqliteRow, type SqliteJobRow } from '../sqlite-row.js';

/**
 * Leases up to `limit` jobs: the earliest of the due scheduled jobs and the running jobs whose
 * lease lapsed with attempts left and no cancel request (unless the caller leaves those out: a
 * constant false term makes SQLite skip that scan), from unpaused queues. SQLite has one
 * writer at a time, so no row locks are needed: the surrounding IMMEDIATE transaction is the lock.
 *
 * Under concurrency limits the claim counts what runs with a live lease per capped queue and key,
 * passes over jobs whose cap is reached (so they cannot starve others), and takes no more than the
 * room left, counting its own picks as it goes.
 */
export function claimJobsQuery(db: Database, t: SqliteNaming) {
  const eligible = `queue IN (SELECT value FROM json_each(@queues)) AND queue NOT IN (SELECT name FROM ${t.queues} WHERE paused = 1)`;
  const candidates = (limit: string, extra: string) => `
        SELECT * FROM (
          SELECT seq, run_at FROM ${t.jobs}
          WHERE state = 'scheduled' AND run_at <= @now AND attempt < max_attempts AND ${eligible} ${extra}
          ORDER BY run_at, seq LIMIT ${limit})
        UNION ALL
        SELECT * FROM (
          SELECT seq, run_at FROM ${t.jobs}
          WHERE @lapsed AND state = 'running' AND leased_until <= @now AND attempt < max_attempts AND cancel_requested = 0 AND ${eligible} ${extra}
          ORDER BY run_at, seq LIMIT ${limit})`;
  const lease = `
      state = 'running',
      attempt = attempt + 1,
      worker_id = @worker_id,
      leased_until = @now + @lease_ms,
      last_error = CASE WHEN state = 'running' THEN 'lease expired' ELSE last_error END,
      updated_at = @now`;
  const claim = db.prepare(`
    UPDATE ${t.jobs} SET ${lease}
    WHERE seq IN (SELECT seq FROM (${candidates('@limit', '')}) ORDER BY run_at, seq LIMIT @limit)
    RETURNING *`);

  const hasLimits = db.prepare(`SELECT EXISTS (SELECT 1 FROM ${t.limits})`).pluck();
  const limits = db.prepare(`SELECT key, max FROM ${t.limits}`);
  const runningByQueue = db.prepare(`SELECT 'queue:' || queue AS key, count(*) AS n FROM ${t.jobs} WHERE state = 'running' AND leased_until > @now GROUP BY queue`);
  const runningByKey = db.prepare(
    `SELECT 'key:' || concurrency_key AS key, count(*) AS n FROM ${t.jobs} WHERE state = 'running' AND leased_until > @now AND concurrency_key IS NOT NULL GROUP BY concurrency_key`,
  );
  const saturated = (column: string, prefix: string) =>
    `AND NOT EXISTS (SELECT 1 FROM ${t.limits} l WHERE l.key = '${prefix}' || ${column} AND l.max <= (
        SELECT count(*) FROM ${t.jobs} r WHERE r.state = 'running' AND r.leased_until > @now AND '${prefix}' || r.${column} = l.key))`;
  const limitedCandidates = db.prepare(`
    SELECT j.* FROM ${t.jobs} j JOIN (${candidates('@window', `${saturated('queue', 'queue:')} ${saturated('concurrency_key', 'key:')}`)}) c ON c.seq = j.seq
    ORDER BY j.run_at, j.seq`);
  const leaseOne = db.prepare(`UPDATE ${t.jobs} SET ${lease} WHERE seq = @seq RETURNING *`);

  return (params: CheckedClaimParams, now: number): JobRow[] => {
    const base = { worker_id: params.workerId, queues: JSON.stringify(params.queues), limit: params.limit, lease_ms: params.leaseMs, lapsed: params.includeLapsed ? 1 : 0, now };
    if (!hasLimits.get()) {
      return (claim.all(base) as SqliteJobRow[]).map(fromSqliteRow).sort((a, b) => a.runAt - b.runAt || a.seq - b.seq);
    }
    const max = new Map((limits.all() as { key: string; max: number }[]).map((l) => [l.key, l.max]));
    const running = new Map<string, number>();
    for (const row of [...runningByQueue.all({ now }), ...runningByKey.all({ now })] as { key: string; n: number }[]) running.set(row.key, row.n);
    const rows = limitedCandidates.all({ ...base, window: params.limit * 4 }) as SqliteJobRow[];
    return pickWithinLimits(rows, (row) => limitKeysOf(row.queue, row.concurrency_key), max, running, params.limit).map((row) =>
      fromSqliteRow(leaseOne.get({ ...base, seq: row.seq }) as SqliteJobRow),
    );
  };
}
