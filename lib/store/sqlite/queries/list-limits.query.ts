import type { Database } from 'better-sqlite3';
import { limitOf } from '../../checked/effect-params.js';
import type { ConcurrencyLimit } from '../../job-store.js';
import type { DriverLimitListParams } from '../../operator-reads.js';
import type { SqliteNaming } from '../sqlite-naming.js';

/** The concurrency limits by key: every one, or a page after a key read in order from the key. */
export function listLimitsQuery(db: Database, t: SqliteNaming) {
  const all = db.prepare(`SELECT key, max FROM ${t.limits} ORDER BY key`);
  const page = db.prepare(`SELECT key, max FROM ${t.limits} WHERE key > ? ORDER BY key LIMIT ?`);
  return ({ limit, after }: DriverLimitListParams): ConcurrencyLimit[] =>
    ((limit === null ? all.all() : page.all(after, limit)) as { key: string; max: number }[]).map((r) => limitOf(r.key, r.max));
}
