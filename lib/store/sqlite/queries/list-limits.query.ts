import type { Database } from 'better-sqlite3';
import { limitOf } from '../../checked/effect-params.js';
import type { ConcurrencyLimit } from '../../job-store.js';
import type { SqliteNaming } from '../sqlite-naming.js';

/** Every concurrency limit, by key. */
export function listLimitsQuery(db: Database, t: SqliteNaming) {
  const listLimits = db.prepare(`SELECT key, max FROM ${t.limits} ORDER BY key`);
  return (): ConcurrencyLimit[] => (listLimits.all() as { key: string; max: number }[]).map((r) => limitOf(r.key, r.max));
}
