import { LANES_PER_CLAIM } from '../../group-turns.js';
import type { PostgresNaming } from '../postgres-naming.js';

/**
 * The steps of the limited claim that read held-back jobs (claim-limited.query.ts), on the clock
 * `ts`, with $2 the batch size.
 *
 * A job a limit held back is parked by the claim that passed it over (migration 0018): its
 * `parked_key` names the limit key that had no room, and it leaves the claim index for a lane, the
 * parked jobs of one queue under one key, in claim order. So a claim walks a held-back backlog at
 * most once, whatever its length, and later claims read a lane only while its key has room, taking
 * no more of it than that room: the cost of a claim beside a held-back backlog is a few index
 * probes per lane, not a read of the backlog.
 */

/**
 * Up to LANES_PER_CLAIM lanes of the `listed` queues that are not paused, numbered `n` in the order
 * read, found by a loose scan of the lane index: one probe per lane, however many jobs each holds,
 * and one per queue the claim does not serve, whose lanes are stepped over whole (so another
 * service's or a paused queue's lanes never use up a claim's lanes). Read from the lane after
 * ($6, $7), the lane the last claim of these queues took from (group-turns.ts), then from the
 * first up to that one; from the first when $6 is null. Row comparison keeps each probe a range
 * read of the index, and the scans run only as far as the limit pulls.
 */
export const claimLanes = (t: PostgresNaming, listed: string, after: { readonly queue: string; readonly key: string } = { queue: '$6', key: '$7' }) => {
  const lane = `state = 'scheduled' AND parked_key IS NOT NULL`;
  const served = (queue: string) => `${queue} = ANY(${listed}) AND ${queue} NOT IN (SELECT name FROM paused)`;
  // From lane l, the next lane of its queue when the claim serves it, else the first lane of the
  // next queue: the conditions on l alone are one-time filters, so one branch runs.
  const scan = (start: string, bound: string) => `(
        WITH RECURSIVE l(queue, key) AS (
          (SELECT queue, parked_key FROM ${t.jobs} WHERE ${lane} AND ${start}${bound} ORDER BY queue, parked_key LIMIT 1)
          UNION ALL
          SELECT n.queue, n.parked_key FROM l CROSS JOIN LATERAL (
            (SELECT queue, parked_key FROM ${t.jobs}
             WHERE ${lane} AND (queue, parked_key) > (l.queue, l.key)${bound} AND ${served('l.queue')}
             ORDER BY queue, parked_key LIMIT 1)
            UNION ALL
            (SELECT queue, parked_key FROM ${t.jobs}
             WHERE ${lane} AND queue > l.queue${bound} AND NOT (${served('l.queue')})
             ORDER BY queue, parked_key LIMIT 1)
          ) n
        )
        SELECT queue, key FROM l WHERE ${served('queue')}
      )`;
  const from = `(queue, parked_key) > (COALESCE(${after.queue}::text, ''), COALESCE(${after.key}::text, ''))`;
  const upTo = ` AND (queue, parked_key) <= (${after.queue}::text, ${after.key}::text)`;
  return `lanes AS (
      SELECT l.queue, l.key, row_number() OVER () AS n FROM (
        SELECT * FROM ${scan(from, '')} a
        UNION ALL
        SELECT * FROM ${scan(`${after.queue}::text IS NOT NULL`, upTo)} b
        LIMIT ${LANES_PER_CLAIM}
      ) l
    )`;
};

/**
 * The room of each lane (of a listed, unpaused queue: `lanes` reads no other) under its own key: the key's free slots beyond
 * its surplus and its free starts, each counted no further than the batch. Counted without locks,
 * so it only bounds how much of the lane is read; the slots and starts themselves are locked later,
 * with every other candidate's. The lane's other limits (a queue's cap on a key's lane) are checked
 * by the pick, like any candidate's.
 */
export const claimLaneRoom = (t: PostgresNaming, ts: string) => `lane_room AS (
      SELECT l.queue, l.key, l.key LIKE 'group:%' AS grp, LEAST(
        COALESCE((SELECT (SELECT count(*) FROM (
            SELECT 1 FROM ${t.slots} s WHERE s.key = c.key AND s.held_until <= ${ts} ORDER BY s.held_until LIMIT $2 + c.surplus
          ) f) - c.surplus FROM ${t.limits} c WHERE c.key = l.key), $2),
        COALESCE((SELECT (SELECT count(*) FROM (
            SELECT 1 FROM ${t.rateStarts} s WHERE s.key = r.key AND s.used_at <= ${ts} - r.per_ms * interval '1 millisecond' ORDER BY s.used_at LIMIT $2
          ) f) FROM ${t.rateLimits} r WHERE r.key = l.key), $2)
      ) AS room
      FROM lanes l
    ), ${claimLaneTake('lane_room', 'r.room')}`;

/**
 * How much of each lane of `source` (queue, key, grp) the claim reads, as `lane_take`: a group's
 * lane has no limit of its own and gives its share of the batch (group-turns.ts); another lane
 * gives `other`, an expression over its row `r`.
 */
export const claimLaneTake = (source: string, other: string) => `lane_take AS (
      SELECT r.queue, r.key, r.grp, CASE WHEN r.grp THEN s.share ELSE ${other} END AS take
      FROM ${source} r, (
        SELECT CASE WHEN count(*) <= 1 THEN $2 ELSE GREATEST(1, ceil($2::numeric / count(*)))::integer END AS share FROM ${source} WHERE grp
      ) s
    )`;

/**
 * The first jobs of each lane with room, no more than its room (a group's lane: its share), in
 * claim order, each with its lane's key. Parked jobs were due when parked, and nothing parks a
 * future-dated one, so the range read stops where it means to.
 */
export const claimLaneJobs = (t: PostgresNaming, columns: string, ts: string) => `lane_jobs AS (
      SELECT d.*, l.key AS lane FROM lane_take l CROSS JOIN LATERAL (
        SELECT ${columns} FROM ${t.jobs} j
        WHERE j.queue = l.queue AND j.parked_key = l.key AND j.state = 'scheduled' AND j.run_at <= ${ts} AND j.attempt < j.max_attempts
        ORDER BY j.priority, j.run_at, j.seq
        LIMIT l.take
        FOR NO KEY UPDATE OF j SKIP LOCKED
      ) d
      WHERE l.take > 0
    )`;

/**
 * The parked jobs of alias `j`, as the operator reads state them to use the parked jobs' run-time
 * index (migration 0027). No claim states it this way, so that index never competes with the lane
 * index for a lane's reads, whatever the statistics say.
 */
export const parkedByRunTime = (j: string) => `${j}.state = 'scheduled' AND coalesce(${j}.parked_key, '') <> ''`;

/** The run time of the oldest due parked job (an operator read; the parked jobs' own run-time index). */
export const oldestParked = (t: PostgresNaming) =>
  `SELECT j.run_at FROM ${t.jobs} j WHERE ${parkedByRunTime('j')} AND j.run_at <= now() ORDER BY j.run_at, j.seq LIMIT 1`;

/**
 * The lane an enqueued job joins at once, or null: the first of its limit keys (its concurrency
 * key's, then its queue's) that holds jobs back right now, because jobs of that queue already wait
 * in its lane, or it is at its cap, or its rate has no start left. A held-back backlog that grows
 * while its key is full is then parked as it is written, and no claim has to walk and park it.
 * Only due jobs join: a lane is read in claim order bounded by its room, and a future-dated job
 * there would be walked by every read until it is due. A limit still pending (declared at enqueue,
 * not yet provisioned) counts as full to claims, but is usually a key seen for the first time, with
 * nothing running: its jobs stay in the claim index. Asked once per (queue, key) of a batch.
 */
export const enqueueLane = (t: PostgresNaming, queue: string, key: string) => `(
        SELECT l.key FROM (VALUES (1, 'key:' || ${key}), (2, 'queue:' || ${queue})) AS l(n, key)
        WHERE l.key IS NOT NULL AND (
          EXISTS (SELECT 1 FROM ${t.jobs} p WHERE p.state = 'scheduled' AND p.parked_key IS NOT NULL AND p.queue = ${queue} AND p.parked_key = l.key)
          OR EXISTS (SELECT 1 FROM ${t.limits} c WHERE c.key = l.key AND NOT c.pending
            AND COALESCE((SELECT s.held_until FROM ${t.slots} s WHERE s.key = c.key ORDER BY s.held_until OFFSET c.surplus LIMIT 1), 'infinity') > now())
          OR EXISTS (SELECT 1 FROM ${t.rateLimits} r WHERE r.key = l.key
            AND COALESCE((SELECT s.used_at FROM ${t.rateStarts} s WHERE s.key = r.key ORDER BY s.used_at LIMIT 1), 'infinity') > now() - r.per_ms * interval '1 millisecond'))
        ORDER BY l.n LIMIT 1
      )`;

/**
 * The most urgent priority a group's lane stopped at its share in (`lane_cut`): a candidate less
 * urgent than that waits for the next round, since that lane may hold more jobs that come first.
 */
export const claimLaneCut = () => `lane_cut AS (
      SELECT min(x.p) AS p FROM (
        SELECT max(j.priority) AS p FROM lane_jobs j JOIN lane_take l ON l.queue = j.queue AND l.key = j.lane
        WHERE l.grp AND l.take < $2 GROUP BY l.queue, l.key, l.take HAVING count(*) = l.take
      ) x
    )`;

/**
 * The candidates in fair order (group-turns.ts), as `ordered` with `ord`: by priority, by turn (a
 * job's place among its group's candidates of its priority; ungrouped jobs are one group, ''),
 * then groups from the one after `after` (the group the last claim took last; null for none),
 * then in claim order. `candidates` needs id, priority, run_at, seq and group_key.
 */
export const claimFairOrder = (after: string) => `turned AS (
      SELECT c.*, COALESCE(c.group_key, '') AS grp, row_number() OVER (PARTITION BY c.priority, COALESCE(c.group_key, '') ORDER BY c.run_at, c.seq) AS turn
      FROM candidates c
    ), ordered AS (
      SELECT c.*, row_number() OVER (ORDER BY c.priority, c.turn, c.grp <= ${after}::text, c.grp, c.run_at, c.seq)::integer AS ord FROM turned c
    )`;

/**
 * Whether a group's lane gave its whole share, less than the batch: it may hold more (`more` of a
 * claim that also took fewer than the batch).
 */
export const laneShared = () =>
  `EXISTS (SELECT 1 FROM lane_take l WHERE l.grp AND l.take < $2 AND l.take = (SELECT count(*) FROM lane_jobs j WHERE j.queue = l.queue AND j.lane = l.key))`;

/** The columns that tell the store where the next claim takes its turn from (postgres-claim.ts). */
export const claimTurnColumns = () => `(SELECT p.grp FROM picked p ORDER BY p.ord DESC LIMIT 1) AS turn_group,
      CASE WHEN (SELECT count(*) FROM lanes) = ${LANES_PER_CLAIM} THEN COALESCE(
        (SELECT ARRAY[p.queue, p.lane] FROM picked p WHERE p.lane IS NOT NULL ORDER BY p.ord DESC LIMIT 1),
        (SELECT ARRAY[l.queue, l.key] FROM lanes l ORDER BY l.n DESC LIMIT 1)) END AS turn_lane`;
