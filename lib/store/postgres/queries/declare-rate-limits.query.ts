import type { NewJob } from '../../enqueue-input.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

/**
 * Writes the rate limits an enqueued batch declares for keys that have none yet, with their unused
 * starts and an audit entry (\`rate_limit.declare\`, which verify reads), in the enqueue's transaction (so they commit or roll back with its jobs). A statement of
 * its own, run only for a batch that declares one: the enqueue statement's text and plan stay as
 * they are for every other batch. Unlike a declared concurrency limit, a rate limit needs no count
 * of running jobs: it counts the starts made from when it commits.
 */
export function declareRateLimitsQuery(t: PostgresNaming) {
  const text = `
    WITH declared AS (
      INSERT INTO ${t.rateLimits} (key, max, per_ms)
      SELECT DISTINCT ON (k.key) k.key, k.max, k.per_ms FROM unnest($1::text[], $2::integer[], $3::bigint[]) AS k(key, max, per_ms) ORDER BY k.key
      ON CONFLICT (key) DO NOTHING
      RETURNING key, max, per_ms
    ), audited AS (
      INSERT INTO ${t.audit} (actor, action, target, detail)
      SELECT 'enqueue', 'rate_limit.declare', key, jsonb_build_object('rate', jsonb_build_object('max', max, 'perMs', per_ms)) FROM declared
    )
    INSERT INTO ${t.rateStarts} (key, n) SELECT d.key, g FROM declared d CROSS JOIN LATERAL generate_series(1, d.max) AS g
    ON CONFLICT (key, n) DO NOTHING`;

  return async (db: PgExecutor, jobs: readonly NewJob[]): Promise<void> => {
    const keys = new Map<string, { max: number; perMs: number }>();
    for (const job of jobs) if (job.concurrencyKey && job.rateLimit && !keys.has(job.concurrencyKey)) keys.set(job.concurrencyKey, job.rateLimit);
    if (keys.size === 0) return;
    const rates = [...keys];
    await db.query(text, [rates.map(([key]) => `key:${key}`), rates.map(([, r]) => r.max), rates.map(([, r]) => r.perMs)]);
  };
}
