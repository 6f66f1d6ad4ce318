import { limitsLockId } from '../postgres-limits.js';
import type { PostgresNaming } from '../postgres-naming.js';

/**
 * The pieces of the statements that set, resize, remove and provision a limit's slots
 * (set-limit.query.ts, provision-pending-limits.query.ts). Each runs in a
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

/** The limits lock taken exclusive, for the rest of the transaction. */
export const exclusiveLimitsLock = (t: PostgresNaming) => `SELECT pg_advisory_xact_lock(${limitsLockId(t)})`;

/** Provisions the slots of the limits `target` selects (its `key` and `max`), marking them provisioned. */
export const provisionSlots = (t: PostgresNaming, target: string) => `
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
