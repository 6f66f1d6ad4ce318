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
  if (caps.size === 0 && rates.size === 0) return statements;
  // A declared limit is audited like a set one (verify reads a limit's history from the audit
  // log), and only by the enqueue that wrote its row: that row, and no other, carries this
  // statement's instant. The duplicate takes the row's exclusive lock, as before, so declarers of
  // one new key queue behind the first instead of deadlocking when it rolls back.
  statements.push({ sql: 'SET @declared_at = UTC_TIMESTAMP(3)' });
  if (caps.size > 0) {
    statements.push({
      sql: `INSERT INTO ${t.limits} (\`key\`, max, pending, updated_at) VALUES ${[...caps].map(() => '(?, ?, TRUE, @declared_at)').join(', ')}
            ON DUPLICATE KEY UPDATE \`key\` = \`key\``,
      values: [...caps].flat(),
    });
    statements.push({
      sql: `INSERT INTO ${t.audit} (at, actor, action, target, detail)
            SELECT @declared_at, 'enqueue', 'limit.declare', l.\`key\`, JSON_OBJECT('max', l.max) FROM ${t.limits} l
            WHERE l.\`key\` IN (?) AND l.pending = TRUE AND l.updated_at = @declared_at ORDER BY l.\`key\``,
      values: [[...caps.keys()]],
    });
  }
  for (const [key, rate] of rates) {
    // Starts only for a limit that has none: a kept one has its own. A second enqueue declaring the
    // same new key waits on the first's row above, and then reads the first's starts here.
    statements.push({
      sql: `INSERT INTO ${t.rateLimits} (\`key\`, max, per_ms, updated_at) VALUES (?, ?, ?, @declared_at) ON DUPLICATE KEY UPDATE \`key\` = \`key\``,
      values: [key, rate.max, rate.perMs],
    });
    statements.push({
      sql: `INSERT INTO ${t.audit} (at, actor, action, target, detail)
            SELECT @declared_at, 'enqueue', 'rate_limit.declare', r.\`key\`, JSON_OBJECT('rate', JSON_OBJECT('max', r.max, 'perMs', r.per_ms)) FROM ${t.rateLimits} r
            WHERE r.\`key\` = ? AND r.updated_at = @declared_at`,
      values: [key],
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
