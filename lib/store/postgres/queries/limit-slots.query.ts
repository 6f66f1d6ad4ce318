import type { PgExecutor } from '../pg-executor.js';
import { limitsLockId } from '../postgres-limits.js';
import type { PostgresNaming } from '../postgres-naming.js';

/** Pending limits one provisioning pass takes at most; the next claim does the rest. */
export const PROVISION_BATCH = 1_000;

/**
 * The statements that set, resize, remove and provision a limit's slots. Each runs in a
 * transaction of the store's own, under the limits lock taken exclusive (postgres-limits.ts), so
 * no claim, slot renewal or slot release runs meanwhile and what they read is exact.
 *
 * A limit's slots are one row per job running under it, with that job's lease, plus free rows up
 * to its max. Provisioning a limit (set for the first time, set again after removal, or declared
 * at enqueue) counts the jobs running under its queue or key and gives each a slot; if more run
 * than the max, the rows beyond it are its surplus. Resizing one adds free rows up to a raised
 * max, or deletes free rows down to a lowered one; the held rows it cannot delete become surplus.
 * A claim takes only free rows beyond the surplus, so the jobs that run always count.
 */
export function limitSlotsQueries(t: PostgresNaming) {
  const exclusive = `SELECT pg_advisory_xact_lock(${limitsLockId(t)})`;
  const provision = (target: string) => `
    WITH target AS (
      ${target}
    ), holders AS (
      SELECT g.key, j.id, j.leased_until, row_number() OVER (PARTITION BY g.key ORDER BY j.leased_until, j.id) AS n
      FROM target g
      JOIN ${t.jobs} j ON j.state = 'running' AND j.leased_until > now() AND g.key IN ('queue:' || j.queue, 'key:' || j.concurrency_key)
    ), sized AS (
      SELECT g.key, g.max, (SELECT count(*) FROM holders h WHERE h.key = g.key)::integer AS held FROM target g
    ), provisioned AS (
      INSERT INTO ${t.slots} (key, slot, job_id, held_until)
      SELECT z.key, n.slot, h.id, COALESCE(h.leased_until, '-infinity')
      FROM sized z CROSS JOIN LATERAL generate_series(1, greatest(z.max, z.held)) AS n(slot)
      LEFT JOIN holders h ON h.key = z.key AND h.n = n.slot
    )
    UPDATE ${t.limits} l SET pending = false, surplus = greatest(0, z.held - z.max), updated_at = now()
    FROM sized z WHERE l.key = z.key
    RETURNING l.key`;
  // The row is this transaction's own (written just before), so it needs no lock here.
  const provisionKey = provision(`SELECT key, max FROM ${t.limits} WHERE key = $1 AND pending`);
  // SKIP LOCKED: a limit an operator is setting right now is provisioned by that operator's call.
  const provisionPending = provision(`SELECT key, max FROM ${t.limits} WHERE pending ORDER BY key LIMIT $1 FOR UPDATE SKIP LOCKED`);
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

  return {
    /**
     * Sets the limit on `key` to `max`, or removes it (`null`), in the caller's transaction. The
     * limit's row is written before the lock is taken: an enqueue that declared this key's limit
     * in a host transaction still open holds that row, and only this call should wait for it, not
     * every claim queued behind the exclusive lock.
     */
    change: async (db: PgExecutor, key: string, max: number | null): Promise<void> => {
      if (max === null) {
        await db.query(`DELETE FROM ${t.limits} WHERE key = $1`, [key]);
        await db.query(exclusive);
        await db.query(`DELETE FROM ${t.slots} WHERE key = $1`, [key]);
        return;
      }
      const [row] = await db.query<{ pending: boolean }>(
        `INSERT INTO ${t.limits} (key, max, pending, updated_at) VALUES ($1, $2, true, now())
         ON CONFLICT (key) DO UPDATE SET max = EXCLUDED.max, updated_at = now() RETURNING pending`,
        [key, max],
      );
      await db.query(exclusive);
      if (row!.pending) await db.query(provisionKey, [key]);
      else await db.query(resize, [key, max]);
    },

    /** Provisions up to `batch` limits declared at enqueue, in the caller's transaction; returns how many. */
    provisionPending: async (db: PgExecutor, batch = PROVISION_BATCH): Promise<number> => {
      await db.query(exclusive);
      return (await db.query(provisionPending, [batch])).length;
    },
  };
}
