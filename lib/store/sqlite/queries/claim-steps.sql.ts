import type { Database } from 'better-sqlite3';
import { MIN_PRIORITY } from '../../../core/index.js';
import type { SqliteNaming } from '../sqlite-naming.js';

/**
 * The steps both claims share (claim-unlimited.query.ts, claim-limited.query.ts), with named
 * parameters: @queues (JSON array), @now, @lapsed (1 or 0), @worker_id, @lease_ms.
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

/** A claim candidate: enough of a row to order it and lease it. */
export interface ClaimCandidate {
  readonly seq: number;
  readonly priority: number;
  readonly run_at: number;
}

/**
 * Reads up to `limit` claim candidates in claim order (priority, run_at, seq): due scheduled jobs,
 * and, when @lapsed is 1, running jobs whose lease lapsed with attempts left and no cancel request.
 * `extra` adds filters (the limited claim's saturation checks).
 *
 * The claim index (priority, run_at, seq) is read one priority at a time, each range bounded by
 * `run_at <= @now`, so future-dated jobs of an urgent priority are never walked on the way to the
 * due jobs of a later one. A read that fills the batch from the first priority in use is one
 * statement, as before priorities; each priority it has to move past costs one more, or two when it
 * has nothing due (the empty read does not name the priority it probed, so it is asked for).
 */
export function claimCandidateReader(db: Database, t: SqliteNaming, extra: string, lapsedExtra = extra) {
  const dueSql = `
        SELECT seq, priority, run_at, 0 AS lapsed FROM ${t.jobs}
        WHERE state = 'scheduled' AND parked_key IS NULL AND run_at <= @now AND attempt < max_attempts AND ${eligible(t)} ${extra}
          AND priority = (SELECT priority FROM ${t.jobs} WHERE state = 'scheduled' AND parked_key IS NULL AND priority > @after ORDER BY priority LIMIT 1)
        ORDER BY run_at, seq LIMIT @limit`;
  // The first read also takes the lapsed leases, when @lapsed is 1: one statement for a claim
  // that fills its batch from the first priority in use.
  const first = db.prepare(`
    SELECT * FROM (${dueSql})
    UNION ALL
    SELECT * FROM (
        SELECT seq, priority, run_at, 1 AS lapsed FROM ${t.jobs}
        WHERE @lapsed AND state = 'running' AND leased_until <= @now AND attempt < max_attempts AND cancel_requested = 0 AND ${eligible(t)} ${lapsedExtra}
        ORDER BY priority, run_at, seq LIMIT @limit)`);
  const due = db.prepare(dueSql);
  const nextPriority = db.prepare(`SELECT priority FROM ${t.jobs} WHERE state = 'scheduled' AND parked_key IS NULL AND priority > ? ORDER BY priority LIMIT 1`).pluck();
  return (params: ReturnType<typeof claimParams>, limit: number): ClaimCandidate[] => {
    const found: ClaimCandidate[] = [];
    let after = MIN_PRIORITY - 1;
    let wanted = limit;
    for (let read = first; wanted > 0; read = due) {
      const rows = read.all({ ...params, after, limit: wanted }) as (ClaimCandidate & { lapsed: 0 | 1 })[];
      found.push(...rows);
      const dueRows = rows.filter((row) => row.lapsed === 0);
      if (dueRows.length === wanted) break;
      wanted -= dueRows.length;
      // Fewer than asked: that priority has no more due jobs. An empty answer does not name it.
      const passed = dueRows.length > 0 ? dueRows[0]!.priority : (nextPriority.get(after) as number | undefined);
      if (passed === undefined) break;
      after = passed;
    }
    return found.sort(candidateOrder).slice(0, limit);
  };
}

function candidateOrder(a: ClaimCandidate, b: ClaimCandidate): number {
  return a.priority - b.priority || a.run_at - b.run_at || a.seq - b.seq;
}

/** The SET list that leases a job: attempt charged, a lapsed lease's reclaim noted. */
export const CLAIM_LEASE = `
      state = 'running',
      attempt = attempt + 1,
      worker_id = @worker_id,
      leased_until = @now + @lease_ms,
      last_error = CASE WHEN state = 'running' THEN 'lease expired' ELSE last_error END,
      parked_key = NULL,
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
