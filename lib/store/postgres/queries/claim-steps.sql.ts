import type { PostgresNaming } from '../postgres-naming.js';

/**
 * The steps both claim statements share (claim-unlimited.query.ts, claim-limited.query.ts). Their
 * parameters: $1 worker id, $2 batch size, $3 lease in ms, $4 whether lapsed leases are searched.
 * The worker's queues are not a parameter: `listed` is their constant array (queue-list.sql.ts),
 * written into the text, and each queue list has statements of its own.
 *
 * Candidates are read with SKIP LOCKED, so concurrent claimers never wait on, or take, each other's
 * rows: due scheduled jobs, and running jobs whose lease lapsed with attempts left and no cancel
 * request. The lock is `FOR NO KEY UPDATE`, what the UPDATE takes anyway: a claim never makes a
 * job terminal, so it need not conflict with an enqueue's parent guard (parent-guard.sql.ts), and a
 * due parent that such an enqueue holds is claimed like any other job.
 *
 * The filters are written so the planner cannot turn them into joins, and so a row read costs the
 * same whatever the number of queues a worker serves. Its queue is looked up in the constant list,
 * which PostgreSQL hashes once per execution, and in the paused queues, read once per execution
 * through their partial index (migration 0010) into a hashed subplan: `NOT IN` stays a subplan,
 * never a join, and means what it says, since neither side is ever null. The limit check is a
 * per-row filter or a one-time one. With a single table left to scan, the planner reads the claim
 * index in order and stops at the batch size, where a join makes it plan for full retrieval and
 * sort every due job.
 */

/**
 * The paused queues, usually none. Read when the claim runs, never written into its text, so a
 * pause or resume applies to the next claim of a statement prepared before it.
 */
export const claimPaused = (t: PostgresNaming) => `paused AS (
      SELECT p.name FROM ${t.queues} p WHERE p.paused
    )`;

/** A job of one of the `listed` queues that is not paused. */
export const claimQueue = (listed: string) => `j.queue = ANY(${listed}) AND j.queue NOT IN (SELECT name FROM paused)`;

/**
 * Due scheduled jobs, in the claim index's order: (priority, run_at, seq). The index is read one
 * priority at a time (scheduledPriorities, then one range of the index per priority, bounded by
 * `run_at <= now()`), so future-dated jobs of an urgent priority are never walked on the way to the
 * due jobs of a later one: read as a single range, a million future-dated jobs at priority -1 would
 * cost every claim a million index entries. Priorities are taken in order and each range is read
 * lazily, so a claim that fills its batch from the first priority probes no other.
 */
export const claimDue = (t: PostgresNaming, listed: string, columns: string, limitCheck: string, read: DueRead = UNLIMITED_READ) => `due AS (
      SELECT d.* FROM ${scheduledPriorities(t)} p CROSS JOIN LATERAL (
        SELECT ${columns} FROM ${t.jobs} j
        WHERE state = 'scheduled' AND parked_key IS NULL AND priority = p.v AND run_at <= ${read.clock} AND attempt < max_attempts
          AND ${claimQueue(listed)} AND ${limitCheck}
        ORDER BY run_at, seq
        LIMIT ${read.window}
        FOR NO KEY UPDATE OF j SKIP LOCKED
      ) d
      LIMIT ${read.window}
    )`;

/**
 * How far the due step reads, and on which clock. The unlimited claim reads its batch ($2) on the
 * transaction's clock; the limited claim reads a window ($5, at least the batch) on its
 * statement's (claim-limited.query.ts).
 */
export interface DueRead {
  readonly window: string;
  readonly clock: string;
}
const UNLIMITED_READ: DueRead = { window: '$2', clock: 'now()' };

/**
 * The priorities scheduled jobs with attempts left hold, lowest first, as a subquery with one
 * column `v`: a loose index scan of the claim index, one probe per priority in use, read only as
 * far as the caller pulls rows. Priorities span -10 to 10, so this is at most 21 probes.
 *
 * The attempts check is in each probe on purpose: it reads the row, so the probe is a plain index
 * scan, never index-only. Between vacuums the start of a priority's range holds the entries of the
 * jobs claimed since, and a plain scan marks each one dead as it passes it, so the range read that
 * follows skips them. An index-only probe passes them without marking them, and every claim would
 * walk them twice.
 */
export const scheduledPriorities = (t: PostgresNaming) => `(
        WITH RECURSIVE p(v) AS (
          (SELECT priority FROM ${t.jobs} WHERE state = 'scheduled' AND parked_key IS NULL AND attempt < max_attempts ORDER BY priority LIMIT 1)
          UNION ALL
          SELECT (SELECT priority FROM ${t.jobs} WHERE state = 'scheduled' AND parked_key IS NULL AND attempt < max_attempts AND priority > p.v ORDER BY priority LIMIT 1)
          FROM p WHERE p.v IS NOT NULL
        )
        SELECT v FROM p WHERE v IS NOT NULL
      )`;

/**
 * Due jobs, then lapsed leases. `$4` alone decides whether the lapsed step runs, so PostgreSQL
 * checks it once (a one-time filter) and a claim that leaves lapsed leases out never starts that
 * scan: between vacuums the lease index holds an entry for every finished job's running version,
 * and searching it walks all of those whose lease has passed (bench/diagnose/dead-entries.mjs).
 */
export const claimCandidates = (
  t: PostgresNaming,
  listed: string,
  columns: string,
  limitCheck: string,
  read: DueRead = UNLIMITED_READ,
  lapsedCheck = limitCheck,
) => `${claimDue(t, listed, columns, limitCheck, read)}, lapsed AS (
      SELECT ${columns} FROM ${t.jobs} j
      WHERE $4::boolean AND state = 'running' AND leased_until <= ${read.clock} AND attempt < max_attempts AND NOT cancel_requested
        AND ${claimQueue(listed)} AND ${lapsedCheck}
      ORDER BY priority, run_at, seq
      LIMIT $2
      FOR NO KEY UPDATE OF j SKIP LOCKED
    )`;

/**
 * Leases the picked jobs: attempt charged, a lapsed lease's reclaim noted. The picked ids are
 * handed over as one array, probed in the primary key: joined to `picked` instead, a table the
 * planner judges small gets hashed whole on every claim.
 */
export const claimLease = (t: PostgresNaming, clock = 'now()') => `UPDATE ${t.jobs} j SET
      state = 'running',
      attempt = j.attempt + 1,
      worker_id = $1,
      leased_until = ${clock} + $3 * interval '1 millisecond',
      last_error = CASE WHEN j.state = 'running' THEN 'lease expired' ELSE j.last_error END,
      parked_key = NULL,
      updated_at = ${clock}
    WHERE j.id = ANY(ARRAY(SELECT id FROM picked))`;

/**
 * Opt-in (PostgresJobStoreOptions.asyncClaimCommit): the claim's own transaction commits without
 * waiting for its WAL flush. A crash of the server in that window undoes the claim; the job is due
 * again, and the worker that took it can record nothing, because the fence refuses it.
 */
export const claimAsyncCommit = (asyncCommit: boolean) => (asyncCommit ? `, set_config('synchronous_commit', 'off', true) AS async_commit` : '');

/** The parameters of both claim statements, in order. */
export const claimValues = (params: { workerId: string; limit: number; leaseMs: number; includeLapsed: boolean }) => [
  params.workerId,
  params.limit,
  params.leaseMs,
  params.includeLapsed,
];
