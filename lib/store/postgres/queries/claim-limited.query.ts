import type { JobRow } from '../../job-row.js';
import type { CheckedClaimParams } from '../../checked/store-params.js';
import type { PgExecutor } from '../pg-executor.js';
import { limitFunction } from '../postgres-limits.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { fromPgRow, jobColumns, type PgJobRow } from '../postgres-row.js';
import { claimAsyncCommit, claimCandidates, claimLease, claimPaused, claimValues } from './claim-steps.sql.js';
import { perQueueList } from './queue-list.sql.js';

/**
 * The claim while a concurrency limit exists: leases up to $2 jobs in one statement, within the
 * limits, in a transaction of its own (the caller's `tx`, see postgres-claim.ts). Jobs whose queue
 * or key is at its cap are passed over, so they cannot starve the rest.
 *
 * A capped queue or key has one row per slot, and every job running under it holds one, however
 * the cap was set (limit-slots.sql.ts). A candidate needs a free slot for each cap it is under,
 * beyond the cap's surplus; free slots are locked with SKIP LOCKED too, so two claimers can never
 * hand out one slot twice. A slot holds its job's lease (heartbeats renew both), so a crashed
 * worker's slots come back when its leases lapse.
 *
 * The first statement of the transaction turns JIT off and takes the limits lock (through
 * limits_pending). JIT off, because the planner cannot know how few slots a claim locks per key,
 * so the estimated cost passes jit_above_cost and PostgreSQL would compile a statement that runs in
 * milliseconds on every claim. The lock, so the claim reads limits and slots with a snapshot taken
 * after it; the answer says whether a limit declared at enqueue still waits for its slots.
 */
export function claimLimitedQuery(t: PostgresNaming, options: { readonly asyncCommit?: boolean } = {}) {
  const asyncCommit = claimAsyncCommit(options.asyncCommit === true);
  // Decided from the slot row alone: when SKIP LOCKED re-checks a slot another claimer has just
  // taken, it sees the slot's new version, but a subquery on the holder's job would still read this
  // statement's older snapshot and call the slot free.
  //
  // Every job running under a cap holds one of its slots, so a cap's free room is its free slots
  // less its surplus (the slots beyond its max, left by lowering it or setting it while more jobs
  // ran: see migration 0009). A key is saturated exactly when it has no more free slots than its
  // surplus, that is when the slot at position `surplus` in held_until order is still held, and the
  // probe reads that one entry of the (key, held_until) index. Asked as "does a free slot with
  // slot <= max exist", the planner, on tables without statistics, scans every slot of the key
  // (and their dead versions) for each candidate.
  const freeSlot = (slot: string) => `${slot}.held_until <= now()`;
  const notSaturated = (job: string) => `NOT EXISTS (
        SELECT 1 FROM ${t.limits} l
        WHERE l.key IN ('queue:' || ${job}.queue, 'key:' || ${job}.concurrency_key)
          AND COALESCE((SELECT s.held_until FROM ${t.slots} s WHERE s.key = l.key ORDER BY s.held_until OFFSET l.surplus LIMIT 1), 'infinity') > now())`;
  // The saturation check is skipped entirely while no limit exists.
  const statement = perQueueList((listed) => `
    WITH ${claimPaused(t)}, ${claimCandidates(t, listed, 'id, priority, run_at, seq, queue, concurrency_key', `(NOT EXISTS (SELECT 1 FROM ${t.limits}) OR ${notSaturated('j')})`)}, candidates AS (
      SELECT c.id, c.priority, c.run_at, c.seq,
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
        row_number() OVER (PARTITION BY c.qkey ORDER BY c.priority, c.run_at, c.seq) AS rq,
        row_number() OVER (PARTITION BY c.kkey ORDER BY c.priority, c.run_at, c.seq) AS rk
      FROM candidates c
    ), picked AS (
      SELECT r.id, r.priority, r.run_at, r.seq, r.qkey, r.kkey FROM ranked r
      WHERE (r.qkey IS NULL OR r.rq <= (SELECT n FROM room WHERE room.key = r.qkey))
        AND (r.kkey IS NULL OR r.rk <= (SELECT n FROM room WHERE room.key = r.kkey))
      ORDER BY r.priority, r.run_at, r.seq LIMIT $2
    ), numbered AS (
      SELECT p.id, p.qkey, p.kkey,
        row_number() OVER (PARTITION BY p.qkey ORDER BY p.priority, p.run_at, p.seq) AS aq,
        row_number() OVER (PARTITION BY p.kkey ORDER BY p.priority, p.run_at, p.seq) AS ak
      FROM picked p
    ), taken AS (
      UPDATE ${t.slots} s SET job_id = m.id, held_until = now() + $3 * interval '1 millisecond'
      FROM numbered m, free f
      WHERE s.key = f.key AND s.slot = f.slot AND ((f.key = m.qkey AND f.n = m.aq) OR (f.key = m.kkey AND f.n = m.ak))
      RETURNING s.key
    )
    ${claimLease(t)}
    RETURNING ${jobColumns('j')}${asyncCommit}`);
  const first = `SELECT set_config('jit', 'off', true), ${limitFunction(t, 'limits_pending')}() AS pending`;

  /** Claims inside `tx`, a transaction opened for this claim alone; `pending` is limits_pending's answer. */
  return async (tx: PgExecutor, params: CheckedClaimParams): Promise<{ rows: JobRow[]; pending: boolean }> => {
    const [lock] = await tx.query<{ pending: boolean }>(first);
    return { rows: (await tx.query<PgJobRow>(statement(params.queues), claimValues(params))).map(fromPgRow), pending: lock!.pending };
  };
}
