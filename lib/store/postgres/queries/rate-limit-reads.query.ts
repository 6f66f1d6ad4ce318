import { rateLimitOf } from '../../checked/effect-params.js';
import type { RateLimit, RateLimitStatus } from '../../job-store.types.js';
import type { DriverLimitListParams } from '../../operator-reads.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

/** Rate limits by key (every one, or a page after a key read in order from the key), and one limit's window now, by the database's clock. */
export function rateLimitReadsQuery(t: PostgresNaming) {
  const list = `SELECT key, max, per_ms::float8 AS per_ms FROM ${t.rateLimits} ORDER BY key`;
  const page = `SELECT key, max, per_ms::float8 AS per_ms FROM ${t.rateLimits} WHERE key > $1 ORDER BY key LIMIT $2`;
  const status = `
    SELECT l.max, l.per_ms::float8 AS per_ms, now() AS now, u.n::integer AS n, u.oldest + l.per_ms * interval '1 millisecond' AS frees
    FROM ${t.rateLimits} l CROSS JOIN LATERAL (
      SELECT count(*) AS n, min(s.used_at) AS oldest FROM ${t.rateStarts} s
      WHERE s.key = l.key AND s.used_at > now() - l.per_ms * interval '1 millisecond'
    ) u
    WHERE l.key = $1`;
  return {
    list: async (db: PgExecutor, { limit, after }: DriverLimitListParams): Promise<RateLimit[]> =>
      (await db.query<{ key: string; max: number; per_ms: number }>(limit === null ? list : page, limit === null ? [] : [after, limit])).map((row) => rateLimitOf(row.key, row.max, row.per_ms)),
    status: async (db: PgExecutor, key: string): Promise<RateLimitStatus | null> => {
      const [row] = await db.query<{ max: number; per_ms: number; now: Date; n: number; frees: Date | null }>(status, [key]);
      if (!row) return null;
      return { max: row.max, perMs: row.per_ms, startsInWindow: row.n, fullUntil: row.n >= row.max ? row.frees : null, now: row.now };
    },
  };
}
