import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { exclusiveLimitsLock, provisionSlots } from './limit-slots.sql.js';

/**
 * Sets the limit on `key` to `max`, or removes it (`null`), in the caller's transaction: a new
 * limit is provisioned, an existing one resized (limit-slots.sql.ts). The limit's row is written
 * before the lock is taken: an enqueue that declared this key's limit in a host transaction still
 * open holds that row, and only this call should wait for it, not every claim queued behind the
 * exclusive lock.
 *
 * A max the limit already has (pending or provisioned), or a removal where there is none, writes
 * nothing and answers false, so the caller audits nothing either; the test is part of the write, as
 * in set-rate-limit.query.ts, so two nodes booting with the same cap write it once.
 */
export function setLimitQuery(t: PostgresNaming) {
  const exclusive = exclusiveLimitsLock(t);
  const upsert = `INSERT INTO ${t.limits} AS l (key, max, pending, updated_at) VALUES ($1, $2, true, now())
         ON CONFLICT (key) DO UPDATE SET max = EXCLUDED.max, updated_at = now() WHERE l.max IS DISTINCT FROM EXCLUDED.max
         RETURNING l.pending`;
  const removeLimit = `DELETE FROM ${t.limits} WHERE key = $1 RETURNING 1`;
  const removeSlots = `DELETE FROM ${t.slots} WHERE key = $1`;
  // The row is this transaction's own (written just before), so it needs no lock here.
  const provisionKey = provisionSlots(t, `SELECT key, max FROM ${t.limits} WHERE key = $1 AND pending`);
  const resize = `
    WITH present AS (
      SELECT count(*)::integer AS n, COALESCE(max(slot), 0) AS top FROM ${t.slots} WHERE key = $1
    ), gone AS (
      DELETE FROM ${t.slots} s WHERE s.key = $1 AND s.slot IN (
        SELECT slot FROM ${t.slots} WHERE key = $1 AND held_until <= now() ORDER BY slot DESC LIMIT greatest(0, (SELECT n FROM present) - $2::integer))
      RETURNING s.slot
    ), added AS (
      INSERT INTO ${t.slots} (key, slot) SELECT $1, (SELECT top FROM present) + g FROM generate_series(1, $2::integer - (SELECT n FROM present)) AS g
    )
    UPDATE ${t.limits} SET surplus = greatest(0, (SELECT n FROM present) - (SELECT count(*) FROM gone)::integer - $2::integer) WHERE key = $1`;

  /** Whether the limit changed. */
  return async (db: PgExecutor, key: string, max: number | null): Promise<boolean> => {
    if (max === null) {
      if ((await db.query(removeLimit, [key])).length === 0) return false;
      await db.query(exclusive);
      await db.query(removeSlots, [key]);
      return true;
    }
    const [row] = await db.query<{ pending: boolean }>(upsert, [key, max]);
    if (!row) return false;
    await db.query(exclusive);
    if (row.pending) await db.query(provisionKey, [key]);
    else await db.query(resize, [key, max]);
    return true;
  };
}
