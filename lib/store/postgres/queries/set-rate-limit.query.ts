import type { Rate } from '../../enqueue-input.types.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { exclusiveLimitsLock } from './limit-slots.sql.js';

/**
 * Sets, changes or (with null) removes the rate limit on `key`, in the caller's transaction, under
 * the limits lock taken exclusive: no claim runs meanwhile, so the starts it keeps are exactly the
 * most recent. A new limit gets `max` unused starts. A changed one keeps its most recent starts up
 * to the new max (a start kept is never older than one dropped, so no later start can share a
 * window with a dropped one) and gets unused ones up to it; a new window applies to those it keeps.
 * The limit's row is written before the lock, as set-limit.query.ts explains.
 *
 * A rate the limit already has, or a removal where there is none, writes nothing and answers false,
 * so the caller audits nothing either. The test is part of the write, not a read before it: two
 * nodes booting with the same rate meet on the limit's row, the second waits for the first to
 * commit and then finds nothing to change.
 */
export function setRateLimitQuery(t: PostgresNaming) {
  const exclusive = exclusiveLimitsLock(t);
  const upsert = `INSERT INTO ${t.rateLimits} AS r (key, max, per_ms, updated_at) VALUES ($1, $2, $3, now())
         ON CONFLICT (key) DO UPDATE SET max = EXCLUDED.max, per_ms = EXCLUDED.per_ms, updated_at = now()
         WHERE (r.max, r.per_ms) IS DISTINCT FROM (EXCLUDED.max, EXCLUDED.per_ms)
         RETURNING 1`;
  const resize = `
    WITH kept AS (
      SELECT n FROM ${t.rateStarts} WHERE key = $1 ORDER BY used_at DESC, n LIMIT $2
    ), gone AS (
      DELETE FROM ${t.rateStarts} WHERE key = $1 AND n NOT IN (SELECT n FROM kept)
    ), present AS (
      SELECT count(*)::integer AS c, COALESCE(max(n), 0) AS top FROM ${t.rateStarts} WHERE key = $1
    )
    INSERT INTO ${t.rateStarts} (key, n) SELECT $1, p.top + g FROM present p CROSS JOIN LATERAL generate_series(1, $2::integer - least(p.c, $2::integer)) AS g`;
  const removeLimit = `DELETE FROM ${t.rateLimits} WHERE key = $1 RETURNING 1`;
  const removeStarts = `DELETE FROM ${t.rateStarts} WHERE key = $1`;

  /** Whether the limit changed. */
  return async (db: PgExecutor, key: string, rate: Rate | null): Promise<boolean> => {
    if (rate === null) {
      if ((await db.query(removeLimit, [key])).length === 0) return false;
      await db.query(exclusive);
      await db.query(removeStarts, [key]);
      return true;
    }
    if ((await db.query(upsert, [key, rate.max, rate.perMs])).length === 0) return false;
    await db.query(exclusive);
    await db.query(resize, [key, rate.max]);
    return true;
  };
}
