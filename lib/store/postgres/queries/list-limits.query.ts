import { limitOf } from '../../checked/effect-params.js';
import type { ConcurrencyLimit } from '../../job-store.js';
import type { DriverLimitListParams } from '../../operator-reads.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

/** The concurrency limits by key: every one, or a page after a key read in order from the key. */
export function listLimitsQuery(t: PostgresNaming) {
  const all = `SELECT key, max FROM ${t.limits} ORDER BY key`;
  const page = `SELECT key, max FROM ${t.limits} WHERE key > $1 ORDER BY key LIMIT $2`;
  return async (db: PgExecutor, { limit, after }: DriverLimitListParams): Promise<ConcurrencyLimit[]> =>
    (await (limit === null ? db.query<{ key: string; max: number }>(all) : db.query<{ key: string; max: number }>(page, [after, limit]))).map((r) => limitOf(r.key, r.max));
}
