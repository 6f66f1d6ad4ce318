import type { Database } from 'better-sqlite3';
import type { SqliteNaming } from '../sqlite-naming.js';
import { freeStart } from './rate-limits.sql.js';

/**
 * The lane a due job joins as it is enqueued, or null: the first of its limit keys (its
 * concurrency key's, then its queue's) that holds jobs back right now, because jobs of that queue
 * already wait in its lane, or it is at its cap, or its rate has no start left. A held-back backlog
 * that grows while its key is full is then parked as it is written, and no claim has to walk and
 * park it (claim-lanes.query.ts). The caller asks only for due jobs: a lane is read in claim order
 * bounded by its room, and a future-dated job there would be walked until it is due.
 */
export function enqueueLaneQuery(db: Database, t: SqliteNaming) {
  const laneExists = db.prepare(`SELECT 1 FROM ${t.jobs} WHERE state = 'scheduled' AND parked_key IS NOT NULL AND queue = ? AND parked_key = ? LIMIT 1`).pluck();
  const capFull = (column: 'concurrency_key' | 'queue') =>
    db
      .prepare(
        `SELECT 1 FROM ${t.limits} l WHERE l.key = @key AND l.max <= (
          SELECT count(*) FROM ${t.jobs} r WHERE r.state = 'running' AND r.leased_until > @now AND r.${column} = @name)`,
      )
      .pluck();
  const keyFull = capFull('concurrency_key');
  const queueFull = capFull('queue');
  const rateSpent = db
    .prepare(`SELECT 1 FROM ${t.rateLimits} r WHERE r.key = @key AND NOT EXISTS (SELECT 1 FROM ${t.rateStarts} s WHERE s.key = r.key AND ${freeStart('s', 'r.per_ms')})`)
    .pluck();
  return (queue: string, concurrencyKey: string | null, now: number): string | null => {
    const keys: [string, string, typeof keyFull][] = concurrencyKey === null ? [] : [[`key:${concurrencyKey}`, concurrencyKey, keyFull]];
    keys.push([`queue:${queue}`, queue, queueFull]);
    for (const [key, name, full] of keys) {
      if (laneExists.get(queue, key) || full.get({ key, name, now }) || rateSpent.get({ key, now })) return key;
    }
    return null;
  };
}
