import type { SqliteNaming } from '../sqlite-naming.js';

/**
 * The steps both claim statements share (claim-unlimited.query.ts, claim-limited.query.ts), with
 * named parameters: @queues (JSON array), @now, @lapsed (1 or 0), @worker_id, @lease_ms.
 */

/**
 * A job of an asked-for, unpaused queue. SQLite runs each of these uncorrelated `IN` lists once per
 * statement into a temporary b-tree, so a row costs one lookup in each whatever the number of
 * queues: the asked-for ones from @queues, the paused ones (usually none) through their partial
 * index (migration 0010). The unary `+` keeps the lists filters: as an index term, the asked-for
 * list made the lapsed step probe the running jobs' queue index once per listed queue (1,000 probes,
 * 2 ms, for a worker serving 1,000 queues) instead of reading the lapsed leases alone.
 */
const eligible = (t: SqliteNaming) => `+queue IN (SELECT value FROM json_each(@queues)) AND +queue NOT IN (SELECT name FROM ${t.queues} WHERE paused = 1)`;

/**
 * The earliest due scheduled jobs, then the running jobs whose lease lapsed with attempts left and
 * no cancel request, `limit` of each. A claim that leaves lapsed leases out passes @lapsed 0, a
 * constant false term that makes SQLite skip that scan.
 */
export const claimCandidates = (t: SqliteNaming, limit: string, extra: string) => `
        SELECT * FROM (
          SELECT seq, run_at FROM ${t.jobs}
          WHERE state = 'scheduled' AND run_at <= @now AND attempt < max_attempts AND ${eligible(t)} ${extra}
          ORDER BY run_at, seq LIMIT ${limit})
        UNION ALL
        SELECT * FROM (
          SELECT seq, run_at FROM ${t.jobs}
          WHERE @lapsed AND state = 'running' AND leased_until <= @now AND attempt < max_attempts AND cancel_requested = 0 AND ${eligible(t)} ${extra}
          ORDER BY run_at, seq LIMIT ${limit})`;

/** The SET list that leases a job: attempt charged, a lapsed lease's reclaim noted. */
export const CLAIM_LEASE = `
      state = 'running',
      attempt = attempt + 1,
      worker_id = @worker_id,
      leased_until = @now + @lease_ms,
      last_error = CASE WHEN state = 'running' THEN 'lease expired' ELSE last_error END,
      updated_at = @now`;

/** The named parameters of both claim statements. */
export const claimParams = (params: { workerId: string; queues: readonly string[]; limit: number; leaseMs: number; includeLapsed: boolean }, now: number) => ({
  worker_id: params.workerId,
  queues: JSON.stringify(params.queues),
  limit: params.limit,
  lease_ms: params.leaseMs,
  lapsed: params.includeLapsed ? 1 : 0,
  now,
});
