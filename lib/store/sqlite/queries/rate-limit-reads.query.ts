import type { Database } from 'better-sqlite3';
import { rateLimitOf } from '../../checked/effect-params.js';
import type { RateLimit, RateLimitStatus } from '../../job-store.types.js';
import type { DriverLimitListParams } from '../../operator-reads.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import { freeStart } from './rate-limits.sql.js';

/** Rate limits by key (every one, or a page after a key read in order from the key), and one limit's window now. */
export function rateLimitReadsQuery(db: Database, t: SqliteNaming) {
  const list = db.prepare(`SELECT key, max, per_ms FROM ${t.rateLimits} ORDER BY key`);
  const page = db.prepare(`SELECT key, max, per_ms FROM ${t.rateLimits} WHERE key > ? ORDER BY key LIMIT ?`);
  const one = db.prepare(`SELECT max, per_ms FROM ${t.rateLimits} WHERE key = ?`);
  const used = db.prepare(`SELECT count(*) AS n, min(used_at) AS oldest FROM ${t.rateStarts} s WHERE key = @key AND NOT ${freeStart('s', '@per_ms')}`);
  return {
    list({ limit, after }: DriverLimitListParams): RateLimit[] {
      return ((limit === null ? list.all() : page.all(after, limit)) as { key: string; max: number; per_ms: number }[]).map((row) => rateLimitOf(row.key, row.max, row.per_ms));
    },
    status(key: string, now: number): RateLimitStatus | null {
      const limit = one.get(key) as { max: number; per_ms: number } | undefined;
      if (!limit) return null;
      const { n, oldest } = used.get({ key, now, per_ms: limit.per_ms }) as { n: number; oldest: number | null };
      const fullUntil = n >= limit.max && oldest !== null ? new Date(oldest + limit.per_ms) : null;
      return { max: limit.max, perMs: limit.per_ms, startsInWindow: n, fullUntil, now: new Date(now) };
    },
  };
}
