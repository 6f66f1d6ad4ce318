import type { Database } from 'better-sqlite3';
import type { SqliteNaming } from '../sqlite-naming.js';

/** Whether any concurrency or rate limit exists: it decides which claim statement runs. */
export function limitsExistQuery(db: Database, t: SqliteNaming) {
  const hasLimits = db.prepare(`SELECT EXISTS (SELECT 1 FROM ${t.limits}) OR EXISTS (SELECT 1 FROM ${t.rateLimits})`).pluck();
  return (): boolean => Boolean(hasLimits.get());
}
