import type { NewJob } from '../../enqueue-input.js';
import type { MysqlStatement } from '../mysql-executor.js';
import type { MysqlNaming } from '../mysql-naming.js';

/**
 * The limits an enqueued batch declares for keys that have none yet, in the enqueue's transaction
 * (so they commit or roll back with its jobs); a key that has one keeps it. A concurrency limit is
 * written pending: a claim that began before it committed may still be running without it, and
 * only a transaction of the store's own, under the limits lock, waits those out and marks it in
 * effect (mysql-limits.ts); claims honour it meanwhile. A rate limit gets its unused starts at once.
 */
export function declareLimitsStatements(t: MysqlNaming, jobs: readonly NewJob[]): MysqlStatement[] {
  const caps = new Map<string, number>();
  const rates = new Map<string, { max: number; perMs: number }>();
  for (const job of jobs) {
    if (!job.concurrencyKey) continue;
    const key = `key:${job.concurrencyKey}`;
    if (job.concurrencyLimit && !caps.has(key)) caps.set(key, job.concurrencyLimit);
    if (job.rateLimit && !rates.has(key)) rates.set(key, job.rateLimit);
  }
  const statements: MysqlStatement[] = [];
  if (caps.size > 0) {
    statements.push({
      sql: `INSERT INTO ${t.limits} (\`key\`, max, pending, updated_at) VALUES ${[...caps].map(() => '(?, ?, TRUE, UTC_TIMESTAMP(3))').join(', ')}
            ON DUPLICATE KEY UPDATE \`key\` = \`key\``,
      values: [...caps].flat(),
    });
  }
  for (const [key, rate] of rates) {
    // Starts only for a limit that has none: a kept one has its own. A second enqueue declaring the
    // same new key waits on the first's row above, and then reads the first's starts here.
    statements.push({
      sql: `INSERT INTO ${t.rateLimits} (\`key\`, max, per_ms, updated_at) VALUES (?, ?, ?, UTC_TIMESTAMP(3)) ON DUPLICATE KEY UPDATE \`key\` = \`key\``,
      values: [key, rate.max, rate.perMs],
    });
    statements.push({
      sql: `INSERT INTO ${t.rateStarts} (\`key\`, n)
            SELECT ?, n FROM JSON_TABLE(?, '$[*]' COLUMNS (n INT PATH '$')) AS s
            WHERE NOT EXISTS (SELECT 1 FROM ${t.rateStarts} r WHERE r.\`key\` = ?)`,
      values: [key, JSON.stringify(Array.from({ length: rate.max }, (_, i) => i + 1)), key],
    });
  }
  return statements;
}
