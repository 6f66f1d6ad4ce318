import type { SqliteNaming } from '../sqlite-naming.js';

/**
 * The pieces of SQL every rate-limit statement shares. A start row is free at @now when it is
 * unused or its last use is a window old; the (key, used_at) index gives a key's longest-unused row
 * first (SQLite sorts null first), so "does the key have a free start" reads one entry.
 */
export const freeStart = (row: string, perMs: string) => `(${row}.used_at IS NULL OR ${row}.used_at <= @now - ${perMs})`;

/** A candidate filter: the job's queue, or its key, has a rate limit with no free start. */
export const rateSaturated = (t: SqliteNaming, column: string, prefix: string) =>
  `AND NOT EXISTS (SELECT 1 FROM ${t.rateLimits} r WHERE r.key = '${prefix}' || ${column} AND NOT EXISTS (
        SELECT 1 FROM ${t.rateStarts} s WHERE s.key = r.key AND ${freeStart('s', 'r.per_ms')}))`;
