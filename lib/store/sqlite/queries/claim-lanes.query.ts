import type { Database } from 'better-sqlite3';
import type { SqliteNaming } from '../sqlite-naming.js';
import type { SqliteJobRow } from '../sqlite-row.js';
import { isGroupLane, laneShare, LANES_PER_CLAIM, shareCut } from '../../group-turns.js';

/**
 * Reads held-back jobs for the limited claim (claim-limited.query.ts). A job a limit held back is
 * parked by the claim that passed it over (migration 0018): its `parked_key` names the limit key
 * that had no room, and it leaves the claim index for a lane, the parked jobs of one queue under
 * one key, in claim order. So a claim walks a held-back backlog at most once, whatever its length,
 * and later claims read a lane only while its key has room, taking no more of it than that room.
 *
 * Lanes are found by a loose scan of the lane index, one probe per lane however many jobs each
 * holds; a lane of a queue the worker does not serve, or of a paused queue, is passed by. A lane's
 * other limits (a queue's cap on a key's lane) are left to the pick, like any candidate's.
 *
 * A group's lane (group-turns.ts) has no limit of its own: it gives its share of the batch. At most
 * LANES_PER_CLAIM lanes are read, from the one after `after`, wrapping.
 */
export function claimLanesReader(db: Database, t: SqliteNaming) {
  // The next lane after (queue, key), as two seeks: SQLite seeks a row value `(queue, parked_key) >
  // (?, ?)` on the index's first column only and then steps over every entry of the lane it starts
  // in (6.8 ms a call beside 100,000 parked jobs, against 0.01 ms for the two seeks).
  const nextKeyInQueue = db.prepare(
    `SELECT queue, parked_key AS key FROM ${t.jobs}
      WHERE state = 'scheduled' AND parked_key IS NOT NULL AND queue = @queue AND parked_key > @key
      ORDER BY queue, parked_key LIMIT 1`,
  );
  const firstInNextQueue = db.prepare(
    `SELECT queue, parked_key AS key FROM ${t.jobs}
      WHERE state = 'scheduled' AND parked_key IS NOT NULL AND queue > @queue
      ORDER BY queue, parked_key LIMIT 1`,
  );
  const nextLane = { get: (at: { queue: string; key: string }) => nextKeyInQueue.get(at) ?? firstInNextQueue.get({ queue: at.queue }) };
  const paused = db.prepare(`SELECT name FROM ${t.queues} WHERE paused = 1`).pluck();
  const laneJobs = db.prepare(
    `SELECT * FROM ${t.jobs}
      WHERE queue = @queue AND parked_key = @key AND state = 'scheduled' AND run_at <= @now AND attempt < max_attempts
      ORDER BY priority, run_at, seq LIMIT @limit`,
  );

  /**
   * Up to LANES_PER_CLAIM lanes of the queues `serves` accepts, from the one after `after` (or the
   * first), wrapping; `capped` when more may follow. A queue it does not serve is stepped over
   * whole, one seek, so another service's or a paused queue's lanes never use up a claim's lanes.
   * The wrap stops at the first lane read already: the seeks follow SQLite's order of the keys,
   * which JavaScript's string order does not always match.
   */
  const lanesFrom = (after: Lane | null, serves: (queue: string) => boolean): { lanes: Lane[]; capped: boolean } => {
    const lanes: Lane[] = [];
    const seen = new Set<string>();
    const walk = (start: Lane) => {
      let skip = false;
      for (let at = start; lanes.length < LANES_PER_CLAIM; ) {
        const lane = (skip ? firstInNextQueue.get({ queue: at.queue }) : nextLane.get(at)) as Lane | undefined;
        if (!lane) return;
        at = lane;
        skip = !serves(lane.queue);
        if (skip) continue;
        const id = `${lane.queue}\u0000${lane.key}`;
        if (seen.has(id)) return;
        seen.add(id);
        lanes.push(lane);
      }
    };
    walk(after ?? { queue: '', key: '' });
    if (after !== null) walk({ queue: '', key: '' });
    return { lanes, capped: lanes.length === LANES_PER_CLAIM };
  };

  /**
   * The first jobs of each lane with room, no more than `roomOf` its key (at most `want`), and of
   * each group's lane its share; `short` when a lane's key had less room than `want`, so jobs stay
   * held back; `shared` when a group's lane gave its share and may hold more; `last` the last lane
   * read when not every lane was; `cut` the priority past which candidates wait (shareCut).
   */
  return (
    params: { readonly now: number },
    queues: readonly string[],
    want: number,
    roomOf: (key: string) => number,
    after: Lane | null = null,
  ): { rows: SqliteJobRow[]; short: boolean; shared: boolean; last: Lane | null; cut: number | null } => {
    const rows: SqliteJobRow[] = [];
    const listed = new Set(queues);
    let stopped: Set<string> | undefined;
    let short = false;
    let shared = false;
    const { lanes: served, capped } = lanesFrom(after, (queue) => {
      if (!listed.has(queue)) return false;
      stopped ??= new Set(paused.all() as string[]);
      return !stopped.has(queue);
    });
    const share = laneShare(want, served.filter((lane) => isGroupLane(lane.key)).length);
    const reads: { share: number; want: number; priorities: number[] }[] = [];
    for (const lane of served) {
      const group = isGroupLane(lane.key);
      const room = group ? share : Math.min(roomOf(lane.key), want);
      if (!group) short ||= room < want;
      if (room <= 0) continue;
      const read = laneJobs.all({ ...lane, now: params.now, limit: room }) as SqliteJobRow[];
      if (group && share < want && read.length === share) shared = true;
      if (group) reads.push({ share, want, priorities: read.map((row) => row.priority) });
      rows.push(...read);
    }
    return { rows, short, shared, last: capped ? served.at(-1)! : null, cut: shareCut(reads) };
  };
}

type Lane = { readonly queue: string; readonly key: string };
