import type { Database } from 'better-sqlite3';
import type { SqliteNaming } from '../sqlite-naming.js';

/**
 * Whether any concurrency or rate limit exists, or a job a limit held back is still parked: it
 * decides which claim statement runs (only the limited one reads lanes).
 */
export function limitsExistQuery(db: Database, t: SqliteNaming) {
  const hasLimits = db
    .prepare(
      `SELECT EXISTS (SELECT 1 FROM ${t.limits}) OR EXISTS (SELECT 1 FROM ${t.rateLimits})
        OR EXISTS (SELECT 1 FROM ${t.jobs} WHERE state = 'scheduled' AND parked_key IS NOT NULL)`,
    )
    .pluck();
  return (): boolean => Boolean(hasLimits.get());
}
