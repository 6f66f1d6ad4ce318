import type { PostgresNaming } from '../postgres-naming.js';

/**
 * The steps both claim statements share (claim-unlimited.query.ts, claim-limited.query.ts). Their
 * parameters: $1 worker id, $2 queues, $3 batch size, $4 lease in ms, $5 whether lapsed leases are
 * searched.
 *
 * Candidates are read with SKIP LOCKED, so concurrent claimers never wait on, or take, each other's
 * rows: due scheduled jobs, and running jobs whose lease lapsed with attempts left and no cancel
 * request. The lock is `FOR NO KEY UPDATE`, what the UPDATE takes anyway: a claim never makes a
 * job terminal, so it need not conflict with an enqueue's parent guard (parent-guard.sql.ts), and a
 * due parent that such an enqueue holds is claimed like any other job.
 *
 * The filters are written so the planner cannot turn them into joins: the active queues become one
 * array computed once (an InitPlan), and the limit check is a per-row filter or a one-time one.
 * With a single table left to scan, the planner reads the claim index in order and stops at the
 * batch size, where a join makes it plan for full retrieval and sort every due job.
 */

/** The unpaused queues among those asked for. */
export const claimActive = (t: PostgresNaming) => `active AS (
      SELECT q FROM unnest($2::text[]) AS q
      WHERE NOT EXISTS (SELECT 1 FROM ${t.queues} p WHERE p.name = q AND p.paused)
    )`;

/** Due scheduled jobs, in the claim index's order. */
export const claimDue = (t: PostgresNaming, columns: string, limitCheck: string) => `due AS (
      SELECT ${columns} FROM ${t.jobs} j
      WHERE state = 'scheduled' AND run_at <= now() AND attempt < max_attempts
        AND j.queue = ANY(ARRAY(SELECT q FROM active)) AND ${limitCheck}
      ORDER BY run_at, seq
      LIMIT $3
      FOR NO KEY UPDATE OF j SKIP LOCKED
    )`;

/**
 * Due jobs, then lapsed leases. `$5` alone decides whether the lapsed step runs, so PostgreSQL
 * checks it once (a one-time filter) and a claim that leaves lapsed leases out never starts that
 * scan: between vacuums the lease index holds an entry for every finished job's running version,
 * and searching it walks all of those whose lease has passed (bench/diagnose/dead-entries.mjs).
 */
export const claimCandidates = (t: PostgresNaming, columns: string, limitCheck: string) => `${claimDue(t, columns, limitCheck)}, lapsed AS (
      SELECT ${columns} FROM ${t.jobs} j
      WHERE $5::boolean AND state = 'running' AND leased_until <= now() AND attempt < max_attempts AND NOT cancel_requested
        AND j.queue = ANY(ARRAY(SELECT q FROM active)) AND ${limitCheck}
      ORDER BY run_at, seq
      LIMIT $3
      FOR NO KEY UPDATE OF j SKIP LOCKED
    )`;

/**
 * Leases the picked jobs: attempt charged, a lapsed lease's reclaim noted. The picked ids are
 * handed over as one array, probed in the primary key: joined to `picked` instead, a table the
 * planner judges small gets hashed whole on every claim.
 */
export const claimLease = (t: PostgresNaming) => `UPDATE ${t.jobs} j SET
      state = 'running',
      attempt = j.attempt + 1,
      worker_id = $1,
      leased_until = now() + $4 * interval '1 millisecond',
      last_error = CASE WHEN j.state = 'running' THEN 'lease expired' ELSE j.last_error END,
      updated_at = now()
    WHERE j.id = ANY(ARRAY(SELECT id FROM picked))`;

/**
 * Opt-in (PostgresJobStoreOptions.asyncClaimCommit): the claim's own transaction commits without
 * waiting for its WAL flush. A crash of the server in that window undoes the claim; the job is due
 * again, and the worker that took it can record nothing, because the fence refuses it.
 */
export const claimAsyncCommit = (asyncCommit: boolean) => (asyncCommit ? `, set_config('synchronous_commit', 'off', true) AS async_commit` : '');

/** The parameters of both claim statements, in order. */
export const claimValues = (params: { workerId: string; queues: readonly string[]; limit: number; leaseMs: number; includeLapsed: boolean }) => [
  params.workerId,
  params.queues,
  params.limit,
  params.leaseMs,
  params.includeLapsed,
];
