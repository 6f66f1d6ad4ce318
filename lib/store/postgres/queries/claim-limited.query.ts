import type { JobRow } from '../../job-row.js';
import type { CheckedClaimParams } from '../../checked/store-params.js';
import type { PgExecutor } from '../pg-executor.js';
import { limitFunction } from '../postgres-limits.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { fromPgRow, jobColumns, type PgJobRow } from '../postgres-row.js';
import { claimFairOrder, claimLaneCut, claimLaneJobs, claimLaneRoom, claimLanes, claimTurnColumns, laneShared } from './claim-lanes.sql.js';
import { claimAsyncCommit, claimCandidates, claimLease, claimPaused, claimValues } from './claim-steps.sql.js';
import { perQueueList } from './queue-list.sql.js';

/** One round of the limited claim: what it leased, and what the caller needs to go on. */
export interface LimitedClaimRound {
  readonly rows: JobRow[];
  /** limits_pending's answer: a limit declared at enqueue still waits for its slots. */
  readonly pending: boolean;
  /** When a rate limit this round spent frees its next start, as a delay (or null). */
  readonly rateWakeMs: number | null;
  /** The batch is not full and the window was: jobs behind the ones this round parked may be due. */
  readonly more: boolean;
  /**
   * Jobs are held back: this round passed one over, or a lane's key had less room than the batch.
   * An outcome that frees room should then wake a claim.
   */
  readonly held: boolean;
  /** The group of the last job this round took in fair order ('' when ungrouped), or null when it took none. */
  readonly turnGroup: string | null;
  /** The lane the next claim reads lanes after, when this round could not read every lane. */
  readonly turnLane: { readonly queue: string; readonly key: string } | null;
}

/**
 * The claim while a concurrency or rate limit exists, or held-back jobs wait: leases up to $2 jobs
 * in one statement, within the limits, in a transaction of its own (the caller's `tx`, see
 * postgres-claim.ts). It reads a window of $5 due jobs (at least $2) from the claim index, the
 * lapsed leases, and the first jobs of each lane whose key has room (claim-lanes.sql.ts), and picks
 * among them in claim order. A job whose queue or key is at its cap, or has no start left in its
 * rate window, is passed over, so it cannot starve the rest, and a passed-over job from the window
 * is parked in its key's lane, so no later claim walks it. A window that held back so many jobs
 * that the batch is not full says so (`more`), and the caller reads on with a wider one.
 *
 * A rate limit has `max` start rows (migration 0017). A candidate needs a free one (last used a
 * window ago or more) of each rate limit it falls under; free starts are locked with SKIP LOCKED
 * like slots, and each pick stamps one with the statement's time. A start row's stamps are
 * therefore always a window apart, whichever claimers took it, and a crashed worker's start stays
 * counted. The statement's time, not the transaction's: the transaction began before it waited
 * for the limits lock, and a start stamped before that wait could free a window after an instant
 * earlier than the claim really took it.
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
 *
 * Groups (group-turns.ts): a group's lane gives its share of the batch, the candidates are taken in
 * fair order (within a priority, by turn, groups from the one after $8), and a grouped job read
 * from the claim index that the batch had no turn for is parked in its group's lane. $6 and $7 are
 * the lane the lanes are read after (claim-lanes.sql.ts).
 */
export function claimLimitedQuery(t: PostgresNaming, options: { readonly asyncCommit?: boolean } = {}) {
  const asyncCommit = claimAsyncCommit(options.asyncCommit === true);
  const ts = 'statement_timestamp()';
  // Decided from the slot row alone: when SKIP LOCKED re-checks a slot another claimer has just
  // taken, it sees the slot's new version, but a subquery on the holder's job would still read this
  // statement's older snapshot and call the slot free.
  //
  // Every job running under a cap holds one of its slots, so a cap's free room is its free slots
  // less its surplus (the slots beyond its max, left by lowering it or setting it while more jobs
  // ran: see migration 0009). A key is saturated exactly when it has no more free slots than its
  // surplus, that is when the slot at position `surplus` in held_until order is still held, and the
  // probe reads that one entry of the (key, held_until) index.
  const freeSlot = (slot: string) => `${slot}.held_until <= ${ts}`;
  const notSaturated = (job: string) => `NOT EXISTS (
        SELECT 1 FROM ${t.limits} l
        WHERE l.key IN ('queue:' || ${job}.queue, 'key:' || ${job}.concurrency_key)
          AND COALESCE((SELECT s.held_until FROM ${t.slots} s WHERE s.key = l.key ORDER BY s.held_until OFFSET l.surplus LIMIT 1), 'infinity') > ${ts})`;
  // A rate-limited key is spent when its longest-unused start (the first entry of the (key, used_at)
  // index) was used less than a window ago.
  const window = (limit: string) => `${limit}.per_ms * interval '1 millisecond'`;
  const notRateSpent = (job: string) => `NOT EXISTS (
        SELECT 1 FROM ${t.rateLimits} r
        WHERE r.key IN ('queue:' || ${job}.queue, 'key:' || ${job}.concurrency_key)
          AND COALESCE((SELECT s.used_at FROM ${t.rateStarts} s WHERE s.key = r.key ORDER BY s.used_at LIMIT 1), 'infinity') > ${ts} - ${window('r')})`;
  // Lapsed leases are running jobs, which no lane holds: a saturated one is filtered where it is
  // read, as before lanes. Due jobs are read unfiltered, so the held-back ones among them are parked.
  const lapsedCheck = `(NOT EXISTS (SELECT 1 FROM ${t.limits}) OR ${notSaturated('j')}) AND (NOT EXISTS (SELECT 1 FROM ${t.rateLimits}) OR ${notRateSpent('j')})`;
  const columns = 'id, priority, run_at, seq, queue, concurrency_key, group_key';
  const statement = perQueueList((listed) => `
    WITH ${claimPaused(t)}, ${claimCandidates(t, listed, columns, 'true', { window: '$5', clock: ts }, lapsedCheck)},
    ${claimLanes(t, listed)}, ${claimLaneRoom(t, ts)}, ${claimLaneJobs(t, columns, ts)}, ${claimLaneCut()}, candidates AS (
      SELECT c.id, c.priority, c.run_at, c.seq, c.parkable, c.queue, c.group_key, c.lane,
        (SELECT l.key FROM ${t.limits} l WHERE l.key = 'queue:' || c.queue) AS qkey,
        (SELECT l.key FROM ${t.limits} l WHERE l.key = 'key:' || c.concurrency_key) AS kkey,
        (SELECT r.key FROM ${t.rateLimits} r WHERE r.key = 'queue:' || c.queue) AS rqkey,
        (SELECT r.key FROM ${t.rateLimits} r WHERE r.key = 'key:' || c.concurrency_key) AS rkkey
      FROM (
        SELECT *, true AS parkable, NULL::text AS lane FROM due
        UNION ALL SELECT *, false, NULL FROM lapsed
        -- A group's lane's job a limit holds back moves to that limit's lane.
        UNION ALL SELECT ${columns}, lane LIKE 'group:%', lane FROM lane_jobs
      ) c
      WHERE c.priority <= COALESCE((SELECT p FROM lane_cut), c.priority)
    ), wanted AS (
      SELECT k.key, count(*) AS n, (SELECT l.surplus FROM ${t.limits} l WHERE l.key = k.key) AS surplus
      FROM (SELECT qkey AS key FROM candidates UNION ALL SELECT kkey FROM candidates) k
      WHERE k.key IS NOT NULL GROUP BY k.key
    ), free AS (
      -- Per key, lock only as many free slots as this claim could use, past the surplus; picks take
      -- them never-held or longest-lapsed first.
      SELECT f.key, f.slot, row_number() OVER (PARTITION BY f.key ORDER BY f.held_until, f.slot) AS n
      FROM wanted w CROSS JOIN LATERAL (
        SELECT s.key, s.slot, s.held_until FROM ${t.slots} s
        WHERE s.key = w.key AND ${freeSlot('s')}
        ORDER BY s.held_until LIMIT LEAST(w.n, $2) + w.surplus
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
        WHERE s.key = w.key AND s.used_at <= ${ts} - ${window('w')}
        ORDER BY s.used_at LIMIT LEAST(w.n, $2)
        FOR UPDATE SKIP LOCKED
      ) f
    ), rroom AS (
      SELECT w.key, (SELECT count(*) FROM rfree f WHERE f.key = w.key) AS n FROM rwanted w
    ), rnext AS (
      -- For every rate-limited key among the candidates: when its next start in use frees, as a
      -- delay from the statement's time (rate-wake.ts); the starts this claim takes are stamped
      -- with it, so none frees sooner.
      SELECT extract(epoch FROM min(LEAST(${ts}, (
          SELECT s.used_at FROM ${t.rateStarts} s WHERE s.key = w.key AND s.used_at > ${ts} - ${window('w')} ORDER BY s.used_at LIMIT 1
        )) + ${window('w')}) - ${ts}) * 1000 AS ms
      FROM rwanted w
    ), ${claimFairOrder('$8')}, rooms AS (
      SELECT array_agg(x.key ORDER BY x.key) AS keys, array_agg(x.n ORDER BY x.key) AS ns
      FROM (SELECT key, n FROM room UNION ALL SELECT '~' || key, n FROM rroom) x
    ), chosen AS (
      SELECT h.* FROM rooms r CROSS JOIN LATERAL ${limitFunction(t, 'claim_pick')}(r.keys, r.ns,
        (SELECT array_agg(o.qkey ORDER BY o.ord) FROM ordered o), (SELECT array_agg(o.kkey ORDER BY o.ord) FROM ordered o),
        (SELECT array_agg(o.rqkey ORDER BY o.ord) FROM ordered o), (SELECT array_agg(o.rkkey ORDER BY o.ord) FROM ordered o), $2::integer) h
    ), picked AS (
      SELECT o.id, o.priority, o.run_at, o.seq, o.qkey, o.kkey, o.rqkey, o.rkkey, o.ord, o.grp, o.queue, o.lane FROM ordered o, chosen h
      WHERE o.ord = ANY(h.picked)
    ), parked AS (
      -- Held back from the window: parked in the lane of the key that had no room. A grouped job
      -- from the window that the batch had no turn for: parked in its group's lane.
      UPDATE ${t.jobs} j SET parked_key = x.key FROM (
        SELECT o.id, x.key FROM chosen h CROSS JOIN LATERAL unnest(h.held, h.held_by) AS x(ord, key) JOIN ordered o ON o.ord = x.ord
        WHERE o.parkable
        UNION ALL
        SELECT o.id, 'group:' || o.group_key FROM ordered o, chosen h
        WHERE o.parkable AND o.lane IS NULL AND o.group_key IS NOT NULL AND NOT (o.ord = ANY(h.picked)) AND NOT (o.ord = ANY(h.held))
      ) x
      WHERE j.id = x.id
    ), numbered AS (
      SELECT p.id, p.qkey, p.kkey, p.rqkey, p.rkkey,
        row_number() OVER (PARTITION BY p.qkey ORDER BY p.priority, p.run_at, p.seq) AS aq,
        row_number() OVER (PARTITION BY p.kkey ORDER BY p.priority, p.run_at, p.seq) AS ak,
        row_number() OVER (PARTITION BY p.rqkey ORDER BY p.priority, p.run_at, p.seq) AS arq,
        row_number() OVER (PARTITION BY p.rkkey ORDER BY p.priority, p.run_at, p.seq) AS ark
      FROM picked p
    ), taken AS (
      -- Every locked slot was counted free: each goes to a pick, or is emptied if its lapsed holder
      -- still names it. Left to that holder, a heartbeat that began before its deadline would renew
      -- it, and under a surplus (room = locked slots - surplus) the cap would be exceeded.
      UPDATE ${t.slots} s SET job_id = a.id,
        held_until = CASE WHEN a.id IS NULL THEN '-infinity'::timestamptz ELSE ${ts} + $3 * interval '1 millisecond' END
      FROM (
        SELECT f.key, f.slot, m.id FROM free f
        LEFT JOIN numbered m ON (f.key = m.qkey AND f.n = m.aq) OR (f.key = m.kkey AND f.n = m.ak)
      ) a
      WHERE s.key = a.key AND s.slot = a.slot AND (a.id IS NOT NULL OR s.job_id IS NOT NULL)
      RETURNING s.key
    ), spent AS (
      -- Each pick stamps one locked start of each rate limit it falls under with the statement's time.
      UPDATE ${t.rateStarts} s SET used_at = ${ts}
      FROM numbered m, rfree f
      WHERE s.key = f.key AND s.n = f.start AND ((f.key = m.rqkey AND f.n = m.arq) OR (f.key = m.rkkey AND f.n = m.ark))
      RETURNING s.key
    ), claimed AS (
      ${claimLease(t, ts)}
      RETURNING ${jobColumns('j')}
    )
    SELECT c.*, (SELECT ms FROM rnext)::float8 AS rate_wake_ms,
      ((SELECT count(*) FROM due) = $5 OR ${laneShared()}) AND (SELECT count(*) FROM picked) < $2 AS more,
      EXISTS (SELECT 1 FROM lane_room WHERE room < $2 AND NOT grp) OR (SELECT cardinality(h.held) > 0 FROM chosen h) AS held,
      ${claimTurnColumns()}${asyncCommit}
    FROM (SELECT 1) one LEFT JOIN claimed c ON true`);
  const first = `SELECT set_config('jit', 'off', true), ${limitFunction(t, 'limits_pending')}() AS pending`;

  /**
   * The transaction's first statement, inside `tx`, a transaction opened for this claim alone: turns
   * JIT off and takes the limits lock; its answer is limits_pending's.
   */
  const begin = async (tx: PgExecutor): Promise<boolean> => (await tx.query<{ pending: boolean }>(first))[0]!.pending;

  /** One round of the claim, after `begin`, reading a window of `window` due jobs (at least the limit). */
  const round = async (tx: PgExecutor, params: CheckedClaimParams, window: number, turns: RoundTurns = NO_TURNS): Promise<Omit<LimitedClaimRound, 'pending'>> => {
    const rows = await tx.query<PgJobRow & { rate_wake_ms: number | null; more: boolean; held: boolean; turn_group: string | null; turn_lane: string[] | null }>(
      statement(params.queues),
      [...claimValues(params), Math.max(window, params.limit), turns.laneAfter?.queue ?? null, turns.laneAfter?.key ?? null, turns.after],
    );
    const head = rows[0]!;
    return {
      rows: rows.filter((row) => row.id !== null).map(fromPgRow),
      rateWakeMs: head.rate_wake_ms,
      more: head.more,
      held: head.held,
      turnGroup: head.turn_group,
      turnLane: head.turn_lane === null ? null : { queue: head.turn_lane[0]!, key: head.turn_lane[1]! },
    };
  };
  return { begin, round };
}

/** Where a round takes its turn from (group-turns.ts): the lane to read lanes after, and the group the last claim took last. */
export interface RoundTurns {
  readonly laneAfter: { readonly queue: string; readonly key: string } | null;
  readonly after: string | null;
}
const NO_TURNS: RoundTurns = { laneAfter: null, after: null };
