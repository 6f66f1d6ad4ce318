import type { CheckedClaimParams } from '../../store-params.js';
import type { JobRow } from '../../job-row.js';
import type { PgExecutor } from '../pg-executor.js';
import { limitFunction } from '../postgres-limits.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { fromPgRow, jobColumns, type PgJobRow } from '../postgres-row.js';

/** Runs `work` in a short transaction of its own. */
export type ClaimTransaction = <T>(work: (db: PgExecutor) => Promise<T>) => Promise<T>;

/**
 * Leases up to $3 jobs in one statement, within concurrency limits (while a limit exists, that
 * statement runs in a transaction of its own that first turns JIT off).
 *
 * Candidates are read with SKIP LOCKED (concurrent claimers never wait on, or take, each other's
 * rows): due scheduled jobs, and running jobs whose lease lapsed with attempts left and no cancel
 * request; jobs whose queue or key is at its cap are passed over, so they cannot starve the rest.
 * The lock is `FOR NO KEY UPDATE`, what the UPDATE takes anyway: a claim never makes a job
 * terminal, so it need not conflict with an enqueue's parent guard (parent-guard.sql.ts), and a due
 * parent that such an enqueue holds is claimed like any other job.
 *
 * A capped queue or key has one row per slot, and every job running under it holds one, however
 * the cap was set (limit-slots.query.ts). A candidate needs a free slot for each cap it is under,
 * beyond the cap's surplus; free slots are locked with SKIP LOCKED too, so two claimers can never
 * hand out one slot twice. A slot holds its job's lease (heartbeats renew both), so a crashed
 * worker's slots come back when its leases lapse.
 */
export function claimJobsQuery(
  t: PostgresNaming,
  options: {
    readonly asyncCommit?: boolean;
    /** Provisions the limits declared at enqueue, in a transaction of its own (limit-slots.query.ts). */
    readonly provisionPending?: () => Promise<unknown>;
  } = {},
) {
  // Opt-in (PostgresJobStoreOptions.asyncClaimCommit): the claim's own transaction commits without
  // waiting for its WAL flush. A crash of the server in that window undoes the claim; the job is
  // due again, and the worker that took it can record nothing, because the fence refuses it.
  const asyncCommit = options.asyncCommit ? `, set_config('synchronous_commit', 'off', true) AS async_commit` : '';
  // Decided from the slot row alone: when SKIP LOCKED re-checks a slot another claimer has just
  // taken, it sees the slot's new version, but a subquery on the holder's job would still read this
  // statement's older snapshot and call the slot free.
  //
  // Every job running under a cap holds one of its slots, so a cap's free room is its free slots
  // less its surplus (the slots beyond its max, left by lowering it or setting it while more jobs
  // ran: see migration 0009). A key is saturated exactly when it has no more free slots than its
  // surplus, that is when the slot at position `surplus` in held_until order is still held, and the
  // probe reads that entry of the (key, held_until) index: the first one while there is no surplus.
  // Asked as "does a free slot with slot <= max exist", the planner, on tables without statistics,
  // bitmap-scanned every slot of the key (and their dead versions) for each candidate instead:
  // seconds per claim under a cap of 10,000.
  const freeSlot = (slot: string) => `${slot}.held_until <= now()`;
  const notSaturated = (job: string) => `NOT EXISTS (
        SELECT 1 FROM ${t.limits} l
        WHERE l.key IN ('queue:' || ${job}.queue, 'key:' || ${job}.concurrency_key)
          AND COALESCE((SELECT s.held_until FROM ${t.slots} s WHERE s.key = l.key ORDER BY s.held_until OFFSET l.surplus LIMIT 1), 'infinity') > now())`;
  // A claim may leave lapsed leases out ($5 false): the parameter alone decides, so PostgreSQL
  // checks it once (a one-time filter) and never starts that scan. Between vacuums the lease index
  // holds an entry for every finished job's running version, and a claim that searched it walked
  // all of those whose lease had passed: about 8 ms per claim after 100,000 jobs
  // (bench/diagnose/dead-entries.mjs).
  //
  // Both statements read candidates the same way. Their filters are written so the planner cannot
  // turn them into joins: the active queues become one array computed once (an InitPlan), and each
  // statement's limit check is a per-row filter or a one-time one. With a single table left to
  // scan, the planner reads the claim index in order and stops at the batch size; a join there
  // made it plan for full retrieval and sort every due job on every claim.
  const active = `active AS (
      SELECT q FROM unnest($2::text[]) AS q
      WHERE NOT EXISTS (SELECT 1 FROM ${t.queues} p WHERE p.name = q AND p.paused)
    )`;
  const due = (columns: string, limitCheck: string) => `due AS (
      SELECT ${columns} FROM ${t.jobs} j
      WHERE state = 'scheduled' AND run_at <= now() AND attempt < max_attempts
        AND j.queue = ANY(ARRAY(SELECT q FROM active)) AND ${limitCheck}
      ORDER BY run_at, seq
      LIMIT $3
      FOR NO KEY UPDATE OF j SKIP LOCKED
    )`;
  const candidates = (columns: string, limitCheck: string) => `${due(columns, limitCheck)}, lapsed AS (
      SELECT ${columns} FROM ${t.jobs} j
      WHERE $5::boolean AND state = 'running' AND leased_until <= now() AND attempt < max_attempts AND NOT cancel_requested
        AND j.queue = ANY(ARRAY(SELECT q FROM active)) AND ${limitCheck}
      ORDER BY run_at, seq
      LIMIT $3
      FOR NO KEY UPDATE OF j SKIP LOCKED
    )`;
  // Both statements lease the picked jobs the same way: attempt charged, a lapsed lease's reclaim noted.
  // The picked ids are handed over as one array, probed in the primary key: joined to `picked`
  // instead, a table the planner judged small (a few thousand jobs) was hashed whole on every claim.
  const leaseUpdate = `UPDATE ${t.jobs} j SET
      state = 'running',
      attempt = j.attempt + 1,
      worker_id = $1,
      leased_until = now() + $4 * interval '1 millisecond',
      last_error = CASE WHEN j.state = 'running' THEN 'lease expired' ELSE j.last_error END,
      updated_at = now()
    WHERE j.id = ANY(ARRAY(SELECT id FROM picked))`;
  // The saturation check is skipped entirely while no limit exists.
  const text = `
    WITH ${active}, ${candidates('id, run_at, seq, queue, concurrency_key', `(NOT EXISTS (SELECT 1 FROM ${t.limits}) OR ${notSaturated('j')})`)}, candidates AS (
      SELECT c.id, c.run_at, c.seq,
        (SELECT l.key FROM ${t.limits} l WHERE l.key = 'queue:' || c.queue) AS qkey,
        (SELECT l.key FROM ${t.limits} l WHERE l.key = 'key:' || c.concurrency_key) AS kkey
      FROM (SELECT * FROM due UNION ALL SELECT * FROM lapsed) c
    ), wanted AS (
      SELECT k.key, count(*) AS n, (SELECT l.surplus FROM ${t.limits} l WHERE l.key = k.key) AS surplus
      FROM (SELECT qkey AS key FROM candidates UNION ALL SELECT kkey FROM candidates) k
      WHERE k.key IS NOT NULL GROUP BY k.key
    ), free AS (
      -- Per key, lock only as many free slots as this claim could use, past the surplus.
      SELECT f.key, f.slot, row_number() OVER (PARTITION BY f.key ORDER BY f.slot) AS n
      FROM wanted w CROSS JOIN LATERAL (
        SELECT s.key, s.slot FROM ${t.slots} s
        WHERE s.key = w.key AND ${freeSlot('s')}
        ORDER BY s.held_until LIMIT w.n + w.surplus
        FOR UPDATE SKIP LOCKED
      ) f
    ), room AS (
      SELECT w.key, (SELECT count(*) FROM free f WHERE f.key = w.key) - w.surplus AS n FROM wanted w
    ), ranked AS (
      SELECT c.*,
        row_number() OVER (PARTITION BY c.qkey ORDER BY c.run_at, c.seq) AS rq,
        row_number() OVER (PARTITION BY c.kkey ORDER BY c.run_at, c.seq) AS rk
      FROM candidates c
    ), picked AS (
      SELECT r.id, r.run_at, r.seq, r.qkey, r.kkey FROM ranked r
      WHERE (r.qkey IS NULL OR r.rq <= (SELECT n FROM room WHERE room.key = r.qkey))
        AND (r.kkey IS NULL OR r.rk <= (SELECT n FROM room WHERE room.key = r.kkey))
      ORDER BY r.run_at, r.seq LIMIT $3
    ), numbered AS (
      SELECT p.id, p.qkey, p.kkey,
        row_number() OVER (PARTITION BY p.qkey ORDER BY p.run_at, p.seq) AS aq,
        row_number() OVER (PARTITION BY p.kkey ORDER BY p.run_at, p.seq) AS ak
      FROM picked p
    ), taken AS (
      UPDATE ${t.slots} s SET job_id = m.id, held_until = now() + $4 * interval '1 millisecond'
      FROM numbered m, free f
      WHERE s.key = f.key AND s.slot = f.slot AND ((f.key = m.qkey AND f.n = m.aq) OR (f.key = m.kkey AND f.n = m.ak))
      RETURNING s.key
    )
    ${leaseUpdate}
    RETURNING ${jobColumns('j')}${asyncCommit}`;

  // The same claim for a database with no limit at all, which is most of them: no slot bookkeeping
  // to plan or run. If a limit exists it claims nothing and says so, and the caller asks again with
  // the full statement. Whether one exists is read by limits_gate, after it took the limits lock:
  // this statement's own snapshot may predate a limit that committed since, and a claim that went
  // by it would start a job the new limit's count of running jobs did not see.
  const fastClaim = (steps: string, picked: string) => `
    WITH ${active}, limited AS MATERIALIZED (
      SELECT ${limitFunction(t, 'limits_gate')}() AS yes
    ), ${steps}, picked AS (
      ${picked}
    ), claimed AS (
      ${leaseUpdate}
      RETURNING ${jobColumns('j')}
    )
    SELECT c.*, l.yes AS limited${asyncCommit} FROM limited l LEFT JOIN claimed c ON true`;
  const unlimited = fastClaim(
    candidates('id, run_at, seq', 'NOT (SELECT yes FROM limited)'),
    'SELECT id FROM (SELECT * FROM due UNION ALL SELECT * FROM lapsed) c ORDER BY run_at, seq LIMIT $3',
  );
  // The same again for a claim that leaves lapsed leases out (all but one per poll interval): no
  // lapsed step to start and end, and no union to sort, only the due jobs in index order. Its own
  // statement rather than the parameter alone, because a one-job claim at idle is mostly fixed cost:
  // setting up and tearing down every step of the plan, run or not.
  const unlimitedDueOnly = fastClaim(due('id', 'NOT (SELECT yes FROM limited)'), 'SELECT id FROM due');

  // After a fast claim found a limit, the full statement is used for this many claims before the
  // fast one is tried again (a limit, once set, usually stays).
  const FULL_CLAIMS_BEFORE_RETRY = 256;
  let fullClaimsLeft = 0;

  // The full statement's estimated cost is large (the planner cannot know how few slots a claim
  // locks per key, so it guesses a tenth of them) and passes jit_above_cost, though it runs in
  // milliseconds: PostgreSQL then compiled it on every claim, ~110 ms of the 170 a claim of 50 took
  // under a queue cap of 10,000. JIT is turned off for its own transaction, before it is planned.
  //
  // The same first statement takes the limits lock (through limits_pending), so the claim reads
  // limits and slots with a snapshot taken after it, and says whether a limit declared at enqueue
  // waits for its slots: those are provisioned after this claim, and the rest of the batch is
  // claimed again, since the claim passed over that key's jobs.
  const full = (transaction: ClaimTransaction, values: unknown[]) =>
    transaction(async (tx) => {
      const [first] = await tx.query<{ pending: boolean }>(`SELECT set_config('jit', 'off', true), ${limitFunction(t, 'limits_pending')}() AS pending`);
      return { rows: await tx.query<PgJobRow>(text, values), pending: first!.pending };
    });
  const fullThenProvision = async (transaction: ClaimTransaction, values: unknown[], limit: number): Promise<PgJobRow[]> => {
    const claimed = await full(transaction, values);
    if (!claimed.pending || !options.provisionPending) return claimed.rows;
    await options.provisionPending();
    if (claimed.rows.length === limit) return claimed.rows;
    const more = await full(transaction, [values[0], values[1], limit - claimed.rows.length, values[3], values[4]]);
    return [...claimed.rows, ...more.rows];
  };

  return async (db: PgExecutor, params: CheckedClaimParams, transaction: ClaimTransaction): Promise<JobRow[]> => {
    const values = [params.workerId, params.queues, params.limit, params.leaseMs, params.includeLapsed];
    let rows: PgJobRow[];
    if (fullClaimsLeft > 0) {
      fullClaimsLeft -= 1;
      rows = await fullThenProvision(transaction, values, params.limit);
    } else {
      const fast = await (params.includeLapsed
        ? db.query<PgJobRow & { limited: boolean }>(unlimited, values)
        : db.query<PgJobRow & { limited: boolean }>(unlimitedDueOnly, values.slice(0, 4)));
      if (fast[0]?.limited) {
        fullClaimsLeft = FULL_CLAIMS_BEFORE_RETRY;
        rows = await fullThenProvision(transaction, values, params.limit);
      } else rows = fast.filter((row) => row.id !== null);
    }
    return rows.map(fromPgRow).sort((a, b) => a.runAt - b.runAt || a.seq - b.seq);
  };
}
