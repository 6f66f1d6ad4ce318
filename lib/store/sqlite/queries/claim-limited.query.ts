import type { Database } from 'better-sqlite3';
import type { JobRow } from '../../job-row.js';
import { limitKeysOf, pickWithinLimits } from '../../limit-room.js';
import type { CheckedClaimParams } from '../../checked/store-params.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import { fromSqliteRow, type SqliteJobRow } from '../sqlite-row.js';
import { CLAIM_LEASE, claimCandidateReader, claimParams } from './claim-steps.sql.js';
import { freeStart, rateSaturated } from './rate-limits.sql.js';

/**
 * The claim while a concurrency or rate limit exists: counts what runs with a live lease per capped
 * queue and key, and the free starts of each rate-limited one, passes over jobs whose cap is
 * reached or whose rate has no start left in its window (so they cannot starve others), and takes
 * no more than the room left, counting its own picks as it goes; each pick uses its rate limits'
 * longest-unused starts. Inside the write transaction nothing else runs, so the counts stay true
 * until it commits.
 */
export function claimLimitedQuery(db: Database, t: SqliteNaming) {
  const limits = db.prepare(`SELECT key, max FROM ${t.limits}`);
  const runningByQueue = db.prepare(`SELECT 'queue:' || queue AS key, count(*) AS n FROM ${t.jobs} WHERE state = 'running' AND leased_until > @now GROUP BY queue`);
  const runningByKey = db.prepare(
    `SELECT 'key:' || concurrency_key AS key, count(*) AS n FROM ${t.jobs} WHERE state = 'running' AND leased_until > @now AND concurrency_key IS NOT NULL GROUP BY concurrency_key`,
  );
  const saturated = (column: string, prefix: string) =>
    `AND NOT EXISTS (SELECT 1 FROM ${t.limits} l WHERE l.key = '${prefix}' || ${column} AND l.max <= (
        SELECT count(*) FROM ${t.jobs} r WHERE r.state = 'running' AND r.leased_until > @now AND '${prefix}' || r.${column} = l.key))`;
  const candidates = claimCandidateReader(
    db,
    t,
    `${saturated('queue', 'queue:')} ${saturated('concurrency_key', 'key:')} ${rateSaturated(t, 'queue', 'queue:')} ${rateSaturated(t, 'concurrency_key', 'key:')}`,
  );
  const rateFree = db.prepare(`SELECT count(*) FROM ${t.rateStarts} s JOIN ${t.rateLimits} r ON r.key = s.key WHERE s.key = @key AND ${freeStart('s', 'r.per_ms')}`).pluck();
  const rated = db.prepare(`SELECT 1 FROM ${t.rateLimits} WHERE key = ?`).pluck();
  // After this claim's stamps: when the key's next start frees (its oldest stamp in the window, plus the window).
  const nextFree = db.prepare(
    `SELECT min(s.used_at) + r.per_ms FROM ${t.rateStarts} s JOIN ${t.rateLimits} r ON r.key = s.key WHERE s.key = @key AND NOT ${freeStart('s', 'r.per_ms')}`,
  ).pluck();
  const useStart = db.prepare(`UPDATE ${t.rateStarts} SET used_at = @now WHERE key = @key AND n = (SELECT n FROM ${t.rateStarts} WHERE key = @key ORDER BY used_at LIMIT 1)`);
  const candidateRows = db.prepare(`SELECT * FROM ${t.jobs} WHERE seq IN (SELECT value FROM json_each(@seqs))`);
  const leaseOne = db.prepare(`UPDATE ${t.jobs} SET ${CLAIM_LEASE} WHERE seq = @seq RETURNING *`);

  /** `rateWake` is told when the next start in use of a rate limit among the candidates frees. */
  return (params: CheckedClaimParams, now: number, rateWake: (delayMs: number) => void = () => {}): JobRow[] => {
    const base = claimParams(params, now);
    const max = new Map((limits.all() as { key: string; max: number }[]).map((l) => [l.key, l.max]));
    const running = new Map<string, number>();
    for (const row of [...runningByQueue.all({ now }), ...runningByKey.all({ now })] as { key: string; n: number }[]) running.set(row.key, row.n);
    const window = candidates(base, params.limit * 4);
    const rows = window.length === 0 ? [] : (candidateRows.all({ seqs: JSON.stringify(window.map((c) => c.seq)) }) as SqliteJobRow[]);
    rows.sort((a, b) => a.priority - b.priority || a.run_at - b.run_at || a.seq - b.seq);
    const keysOf = (row: SqliteJobRow) => limitKeysOf(row.queue, row.concurrency_key);
    const rateRoom = new Map<string, number>();
    for (const key of new Set(rows.flatMap(keysOf))) if (rated.get(key)) rateRoom.set(key, rateFree.get({ key, now }) as number);
    const wanted = new Map<string, number>();
    for (const key of rows.flatMap(keysOf)) if (rateRoom.has(key)) wanted.set(key, (wanted.get(key) ?? 0) + 1);
    const picked = pickWithinLimits(rows, keysOf, max, running, params.limit, rateRoom).map((row) => {
      for (const key of keysOf(row)) if (rateRoom.has(key)) useStart.run({ key, now });
      return fromSqliteRow(leaseOne.get({ ...base, seq: row.seq }) as SqliteJobRow);
    });
    // Every rate-limited key among the candidates, held back or not: the window read stops at
    // limit × 4 candidates, so a claim that took a key's last starts cannot tell whether more of
    // its jobs wait, and later claims pass the spent key by without asking.
    const frees = [...wanted.keys()].map((key) => nextFree.get({ key, now }) as number | null).filter((at): at is number => at !== null);
    if (frees.length > 0) rateWake(Math.min(...frees) - now);
    return picked;
  };
}
