import type { JobState } from '../../../core/index.js';
import type { NewJob } from '../../enqueue-input.js';
import { uniqueSlot, windowSlot, type UniqueHolder, type UniqueReplace } from '../../unique/unique-plan.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { pgInstant } from '../pg-instant.js';
import { DEBOUNCE_HOLDER, HOLDING, uniqueLockSpace } from './unique-lock.sql.js';

/**
 * The statements of an enqueue that carries unique keys or windows: lock the keys, look up their
 * holders, rewrite the holders that have not started (see unique-lock.sql.ts for the lock). A
 * window's lock hashes its kind with the name and key, so it never shares a unique key's lock.
 */
export function uniqueEnqueueQueries(t: PostgresNaming) {
  const space = uniqueLockSpace(t);
  // Sorted and distinct, so two batches that share keys always lock them in the same order.
  const lock = `
    SELECT count(pg_advisory_xact_lock(hashtext($1), h)) AS n, current_setting('transaction_isolation') AS isolation
    FROM (
      SELECT DISTINCT hashtext(CASE WHEN u.w IS NULL THEN jsonb_build_array(u.n, u.k) ELSE jsonb_build_array(u.w, u.n, u.k) END::text) AS h
      FROM unnest($2::text[], $3::text[], $4::text[]) AS u(n, k, w) ORDER BY 1) s`;
  // A separate statement from the lock, so its snapshot is taken after the lock was granted.
  const lookup = `
    SELECT 'holder' AS kind, j.id, j.name, j.unique_key, j.state, j.attempt FROM ${t.jobs} j
    WHERE (j.name, j.unique_key) IN (SELECT * FROM unnest($1::text[], $2::text[])) AND j.unique_key IS NOT NULL AND j.state IN ${HOLDING}
    UNION ALL
    SELECT 'id', j.id, NULL, NULL, NULL, NULL FROM ${t.jobs} j WHERE j.id = ANY($3::uuid[])
    UNION ALL
    SELECT 'debounce', j.id, j.name, j.window_key, j.state, j.attempt FROM ${t.jobs} j
    WHERE (j.name, j.window_key) IN (SELECT * FROM unnest($4::text[], $5::text[])) AND ${DEBOUNCE_HOLDER}
    UNION ALL
    SELECT 'throttle', j.id, j.name, j.window_key, j.state, j.attempt FROM ${t.jobs} j
    WHERE (j.name, j.window_key) IN (SELECT * FROM unnest($6::text[], $7::text[])) AND j.window_kind = 'throttle' AND j.window_ends_at > now()`;
  // Rewrites only a holder that has still not started: a claim that took it meanwhile wins. A
  // holder a limit held back leaves its lane for the claim index with its new run time, since a
  // lane holds only jobs that were due (claim-lanes.sql.ts). A debounced holder runs no later than
  // its window's end; LEAST ignores the NULL end of a unique-key holder.
  const replace = `
    WITH input AS (
      SELECT r.id, r.payload, date_trunc('milliseconds', COALESCE(r.run_at, now() + r.delay_ms * interval '1 millisecond')) AS at
      FROM unnest($1::uuid[], $2::text[], $3::timestamptz[], $4::bigint[]) AS r(id, payload, run_at, delay_ms)
    ), replaced AS (
      UPDATE ${t.jobs} j SET payload = i.payload::jsonb, run_at = LEAST(i.at, j.window_ends_at), scheduled_for = LEAST(i.at, j.window_ends_at), parked_key = NULL, updated_at = now()
      FROM input i
      WHERE j.id = i.id AND j.attempt = 0 AND j.state IN ('scheduled', 'awaiting_parents')
      RETURNING j.id, j.queue, j.state, j.run_at
    ), wake AS (
      SELECT pg_notify($5, queue) FROM (SELECT DISTINCT queue FROM replaced WHERE state = 'scheduled' AND run_at <= now()) due
    )
    SELECT id FROM replaced, (SELECT count(*) FROM wake) AS hinted`;

  return {
    /**
     * Locks the unique keys and windows of `jobs` until the surrounding transaction ends, and says
     * at which isolation level that transaction runs.
     */
    lock: async (db: PgExecutor, jobs: readonly NewJob[]): Promise<string> => {
      const [row] = await db.query<{ isolation: string }>(lock, [
        space,
        jobs.map((j) => j.name),
        jobs.map((j) => j.uniqueKey ?? j.window?.key),
        jobs.map((j) => (j.uniqueKey == null ? (j.window?.kind ?? null) : null)),
      ]);
      return row!.isolation;
    },

    /**
     * The stored holders of the keys and windows of `keyed` (a unique key's unfinished job, a
     * debounce's job that has not started, a throttle's job whose window is open), and which of
     * `ids` are stored already.
     */
    lookup: async (db: PgExecutor, keyed: readonly NewJob[], ids: readonly string[]) => {
      const unique = keyed.filter((j) => j.uniqueKey != null);
      const debounced = keyed.filter((j) => j.uniqueKey == null && j.window?.kind === 'debounce');
      const throttled = keyed.filter((j) => j.uniqueKey == null && j.window?.kind === 'throttle');
      const rows = await db.query<{ kind: 'holder' | 'id' | 'debounce' | 'throttle'; id: string; name: string; unique_key: string; state: JobState; attempt: number }>(lookup, [
        unique.map((j) => j.name),
        unique.map((j) => j.uniqueKey),
        ids,
        debounced.map((j) => j.name),
        debounced.map((j) => j.window!.key),
        throttled.map((j) => j.name),
        throttled.map((j) => j.window!.key),
      ]);
      const holders = new Map<string, UniqueHolder>();
      const existing = new Set<string>();
      for (const row of rows) {
        if (row.kind === 'id') existing.add(row.id);
        else holders.set(row.kind === 'holder' ? uniqueSlot(row.name, row.unique_key) : windowSlot(row.kind, row.name, row.unique_key), { id: row.id, state: row.state, attempt: row.attempt });
      }
      return { holders, existing };
    },

    /** Rewrites the holders that have not started; returns the ids it rewrote. */
    replace: async (db: PgExecutor, ops: readonly UniqueReplace[]): Promise<Set<string>> => {
      const rows = await db.query<{ id: string }>(replace, [
        ops.map((o) => o.id),
        ops.map((o) => o.payload),
        ops.map((o) => (o.runAt === null ? null : pgInstant(o.runAt))),
        ops.map((o) => o.delayMs),
        t.channel,
      ]);
      return new Set(rows.map((row) => row.id));
    },
  };
}
