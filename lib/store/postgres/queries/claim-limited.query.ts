import type { JobRow } from '../../job-row.js';
import type { CheckedClaimParams } from '../../checked/store-params.js';
import type { PgExecutor } from '../pg-executor.js';
import { limitFunction } from '../postgres-limits.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { fromPgRow, jobColumns, type PgJobRow } from '../postgres-row.js';
import { claimAsyncCommit, claimCandidates, claimLease, claimPaused, claimValues } from './claim-steps.sql.js';
import { perQueueList } from './queue-list.sql.js';

/**
 * The claim while a concurrency or rate limit exists: leases up to $2 jobs in one statement, within
 * the limits, in a transaction of its own (the caller's `tx`, see postgres-claim.ts). Jobs whose
 * queue or key is at its cap, or has no start left in its rate window, are passed over, so they
 * cannot starve the rest.
 *
 * A rate limit has `max` start rows (migration 0017). A candidate needs a free one (last used a
 * window ago or more) of each rate limit it falls under; free starts are locked with SKIP LOCKED
 * like slots, and each pick stamps one with now(). A start row's stamps are therefore always a
 * window apart, whichever claimers took it, and a crashed worker's start stays counted.
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
  // A rate-limited key is spent when its longest-unused start (the first entry of the (key, used_at)
  // index) was used less than a window ago.
  const window = (limit: string) => `${limit}.per_ms * interval '1 millisecond'`;
  const notRateSpent = (job: string) => `NOT EXISTS (
        SELECT 1 FROM ${t.rateLimits} r
        WHERE r.key IN ('queue:' || ${job}.queue, 'key:' || ${job}.concurrency_key)
          AND COALESCE((SELECT s.used_at FROM ${t.rateStarts} s WHERE s.key = r.key ORDER BY s.used_at LIMIT 1), 'infinity') > now() - ${window('r')})`;
  // Each check is skipped entirely while no limit of its kind exists.
  const limitCheck = `(NOT EXISTS (SELECT 1 FROM ${t.limits}) OR ${notSaturated('j')}) AND (NOT EXISTS (SELECT 1 FROM ${t.rateLimits}) OR ${notRateSpent('j')})`;
  const statement = perQueueList((listed) => `
    WITH ${claimPaused(t)}, ${claimCandidates(t, listed, 'id, priority, run_at, seq, queue, concurrency_key', limitCheck)}, candidates AS (
      SELECT c.id, c.priority, c.run_at, c.seq,
        (SELECT l.key FROM ${t.limits} l WHERE l.key = 'queue:' || c.queue) AS qkey,
        (SELECT l.key FROM ${t.limits} l WHERE l.key = 'key:' || c.concurrency_key) AS kkey,
        (SELECT r.key FROM ${t.rateLimits} r WHERE r.key = 'queue:' || c.queue) AS rqkey,
        (SELECT r.key FROM ${t.rateLimits} r WHERE r.key = 'key:' || c.concurrency_key) AS rkkey
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
    ), rwanted AS (
      SELECT k.key, count(*) AS n, (SELECT r.per_ms FROM ${t.rateLimits} r WHERE r.key = k.key) AS per_ms
      FROM (SELECT rqkey AS key FROM candidates UNION ALL SELECT rkkey FROM candidates) k
      WHERE k.key IS NOT NULL GROUP BY k.key
    ), rfree AS (
      -- Per rate-limited key, lock as many free starts as this claim could use, longest-unused first.
      SELECT f.key, f.n AS start, row_number() OVER (PARTITION BY f.key ORDER BY f.used_at, f.n) AS n
      FROM rwanted w CROSS JOIN LATERAL (
        SELECT s.key, s.n, s.used_at FROM ${t.rateStarts} s
        WHERE s.key = w.key AND s.used_at <= now() - ${window('w')}
        ORDER BY s.used_at LIMIT w.n
        FOR UPDATE SKIP LOCKED
      ) f
    ), rroom AS (
      SELECT w.key, (SELECT count(*) FROM rfree f WHERE f.key = w.key) AS n FROM rwanted w
    ), rnext AS (
      -- For every rate-limited key among the candidates: when its next start in use frees, as a
      -- delay from now() (rate-wake.ts); the starts this claim takes are stamped now(), so none
      -- frees sooner. The candidates stop at the claim's limit, so a claim that takes a key's last
      -- free starts cannot tell whether more of its jobs wait, and later claims pass the spent key
      -- by; a wake that finds nothing costs one claim per window.
      SELECT extract(epoch FROM min(LEAST(now(), (
          SELECT s.used_at FROM ${t.rateStarts} s WHERE s.key = w.key AND s.used_at > now() - ${window('w')} ORDER BY s.used_at LIMIT 1
        )) + ${window('w')}) - now()) * 1000 AS ms
      FROM rwanted w
    ), ordered AS (
      SELECT c.*, row_number() OVER (ORDER BY c.priority, c.run_at, c.seq)::integer AS ord FROM candidates c
    ), rooms AS (
      SELECT array_agg(x.key ORDER BY x.key) AS keys, array_agg(x.n ORDER BY x.key) AS ns
      FROM (SELECT key, n FROM room UNION ALL SELECT '~' || key, n FROM rroom) x
    ), chosen AS (
      SELECT ${limitFunction(t, 'limits_pick')}(r.keys, r.ns,
        (SELECT array_agg(o.qkey ORDER BY o.ord) FROM ordered o), (SELECT array_agg(o.kkey ORDER BY o.ord) FROM ordered o),
        (SELECT array_agg(o.rqkey ORDER BY o.ord) FROM ordered o), (SELECT array_agg(o.rkkey ORDER BY o.ord) FROM ordered o), $2::integer) AS ords
      FROM rooms r
    ), picked AS (
      SELECT o.id, o.priority, o.run_at, o.seq, o.qkey, o.kkey, o.rqkey, o.rkkey FROM ordered o, chosen h
      WHERE o.ord = ANY(h.ords)
    ), numbered AS (
      SELECT p.id, p.qkey, p.kkey, p.rqkey, p.rkkey,
        row_number() OVER (PARTITION BY p.qkey ORDER BY p.priority, p.run_at, p.seq) AS aq,
        row_number() OVER (PARTITION BY p.kkey ORDER BY p.priority, p.run_at, p.seq) AS ak,
        row_number() OVER (PARTITION BY p.rqkey ORDER BY p.priority, p.run_at, p.seq) AS arq,
        row_number() OVER (PARTITION BY p.rkkey ORDER BY p.priority, p.run_at, p.seq) AS ark
      FROM picked p
    ), taken AS (
      UPDATE ${t.slots} s SET job_id = m.id, held_until = now() + $3 * interval '1 millisecond'
      FROM numbered m, free f
      WHERE s.key = f.key AND s.slot = f.slot AND ((f.key = m.qkey AND f.n = m.aq) OR (f.key = m.kkey AND f.n = m.ak))
      RETURNING s.key
    ), spent AS (
      -- Each pick stamps one locked start of each rate limit it falls under with this claim's now().
      UPDATE ${t.rateStarts} s SET used_at = now()
      FROM numbered m, rfree f
      WHERE s.key = f.key AND s.n = f.start AND ((f.key = m.rqkey AND f.n = m.arq) OR (f.key = m.rkkey AND f.n = m.ark))
      RETURNING s.key
    )
    ${claimLease(t)}
    RETURNING ${jobColumns('j')}, (SELECT ms FROM rnext)::float8 AS rate_wake_ms${asyncCommit}`);
  const first = `SELECT set_config('jit', 'off', true), ${limitFunction(t, 'limits_pending')}() AS pending`;

  /**
   * Claims inside `tx`, a transaction opened for this claim alone; `pending` is limits_pending's
   * answer, `rateWakeMs` when a rate limit this claim spent frees its next start (or null).
   */
  return async (tx: PgExecutor, params: CheckedClaimParams): Promise<{ rows: JobRow[]; pending: boolean; rateWakeMs: number | null }> => {
    const [lock] = await tx.query<{ pending: boolean }>(first);
    const rows = await tx.query<PgJobRow & { rate_wake_ms: number | null }>(statement(params.queues), claimValues(params));
    return { rows: rows.map(fromPgRow), pending: lock!.pending, rateWakeMs: rows[0]?.rate_wake_ms ?? null };
  };
}
