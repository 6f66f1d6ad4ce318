import type { Database } from 'better-sqlite3';
import type { JobRow } from '../../job-row.js';
import { limitKeysOf, pickWithinLimits } from '../../limit-room.js';
import { fairOrder, groupLane, GroupTurns, isGroupLane } from '../../group-turns.js';
import type { CheckedClaimParams } from '../../checked/store-params.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import { fromSqliteRow, type SqliteJobRow } from '../sqlite-row.js';
import { claimLanesReader } from './claim-lanes.query.js';
import { CLAIM_LEASE, claimCandidateReader, claimParams } from './claim-steps.sql.js';
import { freeStart, rateSaturated } from './rate-limits.sql.js';

/**
 * A window that held back so many jobs that the batch is not full is read again, wider each round
 * (the jobs it held back are parked by then, so each round reads past them), up to MAX_WINDOW and
 * MAX_ROUNDS rounds; a longer backlog is parked over several claims, and the claim that stopped
 * short asks for another at once.
 */
const WINDOW_GROWTH = 4;
const MAX_WINDOW = 4_096;
const MAX_ROUNDS = 6;

/** What the limited claim tells its store besides the jobs it leased. */
export interface SqliteClaimSignals {
  /** The next start in use of a rate limit among the candidates frees in `delayMs` (rate-wake.ts). */
  rateWake(delayMs: number): void;
  /** The claim stopped short of a backlog it was parking: claim again now. */
  claimAgain(): void;
  /** Whether held-back jobs exist (held-wake.ts). */
  held(seen: boolean): void;
}

/**
 * The claim while a concurrency or rate limit exists, or held-back jobs wait: counts what runs with
 * a live lease per capped queue and key, and the free starts of each rate-limited one, reads a
 * window of due jobs from the claim index, the lapsed leases, and the first jobs of each lane whose
 * key has room (claim-lanes.query.ts), and picks among them in claim order. A job whose cap is
 * reached or whose rate has no start left in its window is passed over, so it cannot starve the
 * rest, and one passed over from the window is parked in its key's lane, so no later claim walks
 * it. It takes no more than the room left, counting its own picks as it goes; each pick uses its
 * rate limits' longest-unused starts. Inside the write transaction nothing else runs, so the
 * counts stay true until it commits.
 *
 * Groups' lanes are read with the others, each for its share of the batch, and the candidates are
 * taken in fair order (group-turns.ts). A grouped job read from the claim index and passed over is
 * parked in its group's lane, as a held-back one is in its key's.
 */
export function claimLimitedQuery(db: Database, t: SqliteNaming) {
  const limits = db.prepare(`SELECT key, max FROM ${t.limits}`);
  const runningByQueue = db.prepare(`SELECT 'queue:' || queue AS key, count(*) AS n FROM ${t.jobs} WHERE state = 'running' AND leased_until > @now GROUP BY queue`);
  const runningByKey = db.prepare(
    `SELECT 'key:' || concurrency_key AS key, count(*) AS n FROM ${t.jobs} WHERE state = 'running' AND leased_until > @now AND concurrency_key IS NOT NULL GROUP BY concurrency_key`,
  );
  // Lapsed leases are running jobs, which no lane holds: a saturated one is filtered where it is
  // read. Due jobs are read unfiltered, so the held-back ones among them are parked.
  const saturated = (column: string, prefix: string) =>
    `AND NOT EXISTS (SELECT 1 FROM ${t.limits} l WHERE l.key = '${prefix}' || ${column} AND l.max <= (
        SELECT count(*) FROM ${t.jobs} r WHERE r.state = 'running' AND r.leased_until > @now AND '${prefix}' || r.${column} = l.key))`;
  const candidates = claimCandidateReader(
    db,
    t,
    '',
    `${saturated('queue', 'queue:')} ${saturated('concurrency_key', 'key:')} ${rateSaturated(t, 'queue', 'queue:')} ${rateSaturated(t, 'concurrency_key', 'key:')}`,
  );
  const lanes = claimLanesReader(db, t);
  const rateFree = db.prepare(`SELECT count(*) FROM ${t.rateStarts} s JOIN ${t.rateLimits} r ON r.key = s.key WHERE s.key = @key AND ${freeStart('s', 'r.per_ms')}`).pluck();
  const rated = db.prepare(`SELECT 1 FROM ${t.rateLimits} WHERE key = ?`).pluck();
  // After this claim's stamps: when the key's next start frees (its oldest stamp in the window, plus the window).
  const nextFree = db.prepare(
    `SELECT min(s.used_at) + r.per_ms FROM ${t.rateStarts} s JOIN ${t.rateLimits} r ON r.key = s.key WHERE s.key = @key AND NOT ${freeStart('s', 'r.per_ms')}`,
  ).pluck();
  const useStart = db.prepare(`UPDATE ${t.rateStarts} SET used_at = @now WHERE key = @key AND n = (SELECT n FROM ${t.rateStarts} WHERE key = @key ORDER BY used_at LIMIT 1)`);
  const candidateRows = db.prepare(`SELECT * FROM ${t.jobs} WHERE seq IN (SELECT value FROM json_each(@seqs))`);
  const leaseOne = db.prepare(`UPDATE ${t.jobs} SET ${CLAIM_LEASE} WHERE seq = @seq RETURNING *`);
  const park = db.prepare(`UPDATE ${t.jobs} SET parked_key = @key WHERE seq = @seq`);
  const turns = new GroupTurns();
  const fields = (row: SqliteJobRow) => ({ priority: row.priority, runAt: row.run_at, seq: row.seq, groupKey: row.group_key });

  return (params: CheckedClaimParams, now: number, signals: SqliteClaimSignals): JobRow[] => {
    const base = claimParams(params, now);
    const max = new Map((limits.all() as { key: string; max: number }[]).map((l) => [l.key, l.max]));
    const running = new Map<string, number>();
    for (const row of [...runningByQueue.all({ now }), ...runningByKey.all({ now })] as { key: string; n: number }[]) running.set(row.key, row.n);
    const keysOf = (row: SqliteJobRow) => limitKeysOf(row.queue, row.concurrency_key);
    // Free starts per rate-limited key, read once per claim and spent by its picks.
    const rateRoom = new Map<string, number>();
    const rateKeys = new Set<string>();
    const readRate = (key: string) => {
      if (rateKeys.has(key)) return;
      rateKeys.add(key);
      if (rated.get(key)) rateRoom.set(key, rateFree.get({ key, now }) as number);
    };
    const roomOf = (key: string): number => {
      readRate(key);
      const capRoom = max.has(key) ? max.get(key)! - (running.get(key) ?? 0) : Number.POSITIVE_INFINITY;
      return Math.min(capRoom, rateRoom.get(key) ?? Number.POSITIVE_INFINITY);
    };

    const leased: JobRow[] = [];
    let held = false;
    let more = false;
    let window = params.limit;
    const laneAfter = turns.laneAfter(params.queues);
    let lastPick: SqliteJobRow | undefined;
    let nextLane: { queue: string; key: string } | null = null;
    for (let round = 0; round < MAX_ROUNDS && leased.length < params.limit; round++) {
      const want = params.limit - leased.length;
      const read = candidates(base, Math.max(window, want));
      const fromWindow = read.length === 0 ? [] : (candidateRows.all({ seqs: JSON.stringify(read.map((c) => c.seq)) }) as SqliteJobRow[]);
      const fromLanes = lanes(base, params.queues, want, roomOf, laneAfter);
      held ||= fromLanes.short;
      const cut = fromLanes.cut;
      const rows = fairOrder([...fromWindow, ...fromLanes.rows].filter((row) => cut === null || row.priority <= cut), fields, lastPick ? (lastPick.group_key ?? '') : turns.after(params.queues));
      for (const key of new Set(rows.flatMap(keysOf))) readRate(key);
      const passed = new Set<SqliteJobRow>();
      const picked = pickWithinLimits(rows, keysOf, max, running, want, rateRoom, (row, key) => {
        held = true;
        passed.add(row);
        if (row.state === 'scheduled' && (row.parked_key == null || isGroupLane(row.parked_key))) park.run({ key, seq: row.seq });
      });
      // A grouped job the batch had no turn for waits in its group's lane from now on.
      const chosen = new Set(picked);
      for (const row of fromWindow) {
        if (row.group_key !== null && row.state === 'scheduled' && !chosen.has(row) && !passed.has(row)) park.run({ key: groupLane(row.group_key), seq: row.seq });
      }
      for (const row of picked) {
        for (const key of keysOf(row)) if (rateRoom.has(key)) useStart.run({ key, now });
        leased.push(fromSqliteRow(leaseOne.get({ ...base, seq: row.seq }) as SqliteJobRow));
      }
      lastPick = picked.at(-1) ?? lastPick;
      if (fromLanes.last !== null) {
        const fromLane = picked.findLast((row) => row.parked_key != null);
        nextLane = fromLane ? { queue: fromLane.queue, key: fromLane.parked_key! } : fromLanes.last;
      }
      more = (read.length === Math.max(window, want) || fromLanes.shared) && picked.length < want;
      if (!more) break;
      window = Math.min(window * WINDOW_GROWTH, MAX_WINDOW);
    }
    turns.record(params.queues, lastPick && { groupKey: lastPick.group_key }, nextLane);
    // Every rate-limited key seen, held back or not: a claim that took a key's last starts cannot
    // tell whether more of its jobs wait, and later claims pass the spent key by without asking.
    const frees = [...rateRoom.keys()].map((key) => nextFree.get({ key, now }) as number | null).filter((at): at is number => at !== null);
    if (frees.length > 0) signals.rateWake(Math.min(...frees) - now);
    signals.held(held);
    if (more && leased.length < params.limit) signals.claimAgain();
    return leased;
  };
}
