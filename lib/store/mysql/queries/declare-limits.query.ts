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
  // A declared limit is audited like a set one (verify reads a limit's history from the audit log):
  // one key per statement, so the audit entry follows only the insert that wrote a row. An INSERT
  // IGNORE that met the key's row counts no row, whatever the session's found-rows flag.
  for (const [key, max] of caps) {
    statements.push({ sql: `INSERT IGNORE INTO ${t.limits} (\`key\`, max, pending, updated_at) VALUES (?, ?, TRUE, UTC_TIMESTAMP(3))`, values: [key, max] });
    statements.push(declaredAudit(t, 'limit.declare', key, { max }));
  }
  for (const [key, rate] of rates) {
    // Starts only for a limit that has none: a kept one has its own. A second enqueue declaring the
    // same new key waits on the first's row above, and then reads the first's starts here.
    statements.push({ sql: `INSERT IGNORE INTO ${t.rateLimits} (\`key\`, max, per_ms, updated_at) VALUES (?, ?, ?, UTC_TIMESTAMP(3))`, values: [key, rate.max, rate.perMs] });
    statements.push(declaredAudit(t, 'rate_limit.declare', key, { rate: { max: rate.max, perMs: rate.perMs } }));
    statements.push({
      sql: `INSERT INTO ${t.rateStarts} (\`key\`, n)
            SELECT ?, n FROM JSON_TABLE(?, '$[*]' COLUMNS (n INT PATH '$')) AS s
            WHERE NOT EXISTS (SELECT 1 FROM ${t.rateStarts} r WHERE r.\`key\` = ?)`,
      values: [key, JSON.stringify(Array.from({ length: rate.max }, (_, i) => i + 1)), key],
    });
  }
  return statements;
}

/** The audit entry of a declaration, written only when the statement before it inserted the limit's row. */
function declaredAudit(t: MysqlNaming, action: string, key: string, detail: Record<string, unknown>): MysqlStatement {
  return {
    sql: `INSERT INTO ${t.audit} (at, actor, action, target, detail) SELECT UTC_TIMESTAMP(3), 'enqueue', ?, ?, ? FROM DUAL WHERE ROW_COUNT() = 1`,
    values: [action, key, JSON.stringify(detail)],
  };
}
