import { rateLimitOf } from '../../checked/effect-params.js';
import type { RateLimit, RateLimitStatus } from '../../job-store.types.js';
import type { DriverLimitListParams } from '../../operator-reads.js';
import type { MysqlExecutor } from '../mysql-executor.js';
import { fromMysqlInstant } from '../mysql-instant.js';
import type { MysqlNaming } from '../mysql-naming.js';

type LimitRow = { key: string; max: number; per_ms: number };

/** Rate limits by storage key: every one, or a page after a key, read in order from the key. */
export async function listRateLimits(db: MysqlExecutor, t: MysqlNaming, { limit, after }: DriverLimitListParams): Promise<RateLimit[]> {
  const rows =
    limit === null
      ? await db.query<LimitRow>(`SELECT \`key\`, max, per_ms FROM ${t.rateLimits} ORDER BY \`key\``)
      : await db.query<LimitRow>(`SELECT \`key\`, max, per_ms FROM ${t.rateLimits} WHERE \`key\` > ? ORDER BY \`key\` LIMIT ?`, [after, limit]);
  return rows.map((row) => rateLimitOf(row.key, row.max, row.per_ms));
}

/**
 * One rate limit's window now, by the database's clock, in one statement: the starts used less
 * than a window ago and the oldest of them. A start is one of the limit's `max` rows, so the count
 * reads at most `max` rows; an unused start's '1000-01-01' lies outside any window. The age is
 * measured in microseconds, exact for DATETIME(3), so a start used exactly a window ago is free,
 * as rate-window.ts has it.
 */
export async function rateLimitStatus(db: MysqlExecutor, t: MysqlNaming, key: string): Promise<RateLimitStatus | null> {
  const [row] = await db.query<{ max: number; per_ms: number; now: string; n: number; oldest: string | null }>(
    `SELECT l.max, l.per_ms, c.now, COUNT(s.n) AS n, MIN(s.used_at) AS oldest
     FROM (SELECT UTC_TIMESTAMP(3) AS now) c
     JOIN ${t.rateLimits} l ON l.\`key\` = ?
     LEFT JOIN ${t.rateStarts} s ON s.\`key\` = l.\`key\` AND TIMESTAMPDIFF(MICROSECOND, s.used_at, c.now) < l.per_ms * 1000
     GROUP BY l.max, l.per_ms, c.now`,
    [key],
  );
  if (!row) return null;
  const n = Number(row.n);
  const fullUntil = n >= row.max && row.oldest !== null ? new Date(fromMysqlInstant(row.oldest).getTime() + row.per_ms) : null;
  return { max: row.max, perMs: row.per_ms, startsInWindow: n, fullUntil, now: fromMysqlInstant(row.now) };
}
