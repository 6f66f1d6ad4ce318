import { limitOf } from '../../checked/effect-params.js';
import type { ConcurrencyLimit } from '../../job-store.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

/** Every concurrency limit, by key. */
export function listLimitsQuery(t: PostgresNaming) {
  const text = `SELECT key, max FROM ${t.limits} ORDER BY key`;
  return async (db: PgExecutor): Promise<ConcurrencyLimit[]> => (await db.query<{ key: string; max: number }>(text)).map((r) => limitOf(r.key, r.max));
}
