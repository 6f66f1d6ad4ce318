import type { SqliteNaming } from '../sqlite-naming.js';
import { freeStart } from './rate-limits.sql.js';

/**
 * The lane a due job joins as it is enqueued, as an expression of the INSERT's named parameters
 * (@queue, @concurrency_key, @group_key, @now, and @due, 1 for a scheduled job due now): the
 * first of its limit keys (its concurrency key's, then its queue's) that holds jobs back right now,
 * because jobs of that queue already wait in its lane, or it is at its cap, or its rate has no
 * start left; else its group's lane ('group:' and the group, docs/groups.md), where the claim
 * takes turns across groups; null when none applies. A held-back backlog that grows while its key is full is then parked as it is
 * written, and no claim has to walk and park it (claim-lanes.query.ts). Only due jobs join: a lane
 * is read in claim order bounded by its room, and a future-dated job there would be walked until
 * it is due. Part of the INSERT, so an enqueue costs no statement more.
 */
export function enqueueLaneSql(t: SqliteNaming): string {
  const holds = (key: string, column: 'concurrency_key' | 'queue', name: string) => `(
        EXISTS (SELECT 1 FROM ${t.jobs} p WHERE p.state = 'scheduled' AND p.parked_key IS NOT NULL AND p.queue = @queue AND p.parked_key = ${key})
        OR EXISTS (SELECT 1 FROM ${t.limits} l WHERE l.key = ${key} AND l.max <= (
          SELECT count(*) FROM ${t.jobs} r WHERE r.state = 'running' AND r.leased_until > @now AND r.${column} = ${name}))
        OR EXISTS (SELECT 1 FROM ${t.rateLimits} r WHERE r.key = ${key} AND NOT EXISTS (
          SELECT 1 FROM ${t.rateStarts} s WHERE s.key = r.key AND ${freeStart('s', 'r.per_ms')})))`;
  const keyLane = `'key:' || @concurrency_key`;
  const queueLane = `'queue:' || @queue`;
  return `CASE WHEN NOT @due THEN NULL
      WHEN @concurrency_key IS NOT NULL AND ${holds(keyLane, 'concurrency_key', '@concurrency_key')} THEN ${keyLane}
      WHEN ${holds(queueLane, 'queue', '@queue')} THEN ${queueLane}
      WHEN @group_key IS NOT NULL THEN 'group:' || @group_key END`;
}
