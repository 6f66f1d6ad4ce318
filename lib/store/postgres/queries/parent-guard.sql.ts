import type { JobState } from '../../../core/index.js';
import type { PostgresNaming } from '../postgres-naming.js';

const TERMINAL = `('succeeded', 'dead_lettered', 'cancelled', 'quarantined')`;

/**
 * The pieces an enqueue statement gains when its jobs depend on parents outside the batch.
 *
 * The race it closes: the enqueue plans a dependant from its parents' states, and a parent's
 * outcome write settles the edges it can see. Each is blind to the other's uncommitted rows, so
 * an enqueue that saw a parent still running, and an outcome write that committed meanwhile
 * without seeing the new edge, left the dependant waiting for the maintenance sweep.
 *
 * So the statement share-locks the parents it leaves open edges to (`parents`, distinct ids), in id
 * order, and writes nothing unless it locked every one and none has finished:
 * - a parent's outcome write (an UPDATE) cannot start on a row this enqueue has locked; it waits
 *   for the enqueue to commit, and its settling, which runs after, sees the new edge;
 * - an outcome write already under way holds the row, so SKIP LOCKED passes it by and the guard
 *   fails; the caller waits for that writer and plans again from the parent's new state.
 *
 * The lock never waits, so an enqueue holding some parents never waits for another; the caller
 * waits only while holding nothing (see postgres-parent-guard.ts). A claim also passes a locked
 * row by, so a due parent gets a wake-up hint, delivered at commit, for another look.
 */
/** `parents` is the placeholder of the uuid[] parameter that lists them. */
export const PARENT_GUARD_CTES = (t: PostgresNaming, parents: string) => `
    locked AS MATERIALIZED (
      SELECT id, state, queue, run_at FROM ${t.jobs} WHERE id = ANY(${parents}::uuid[]) ORDER BY id FOR SHARE SKIP LOCKED
    ), guard AS MATERIALIZED (
      SELECT count(*) = cardinality(${parents}::uuid[]) AND count(*) FILTER (WHERE state IN ${TERMINAL}) = 0 AS ok FROM locked
    ), parent_wake AS (
      SELECT pg_notify($8, queue) FROM (SELECT DISTINCT queue FROM locked WHERE state = 'scheduled' AND run_at <= now()) due
      WHERE (SELECT ok FROM guard)
    ),`;

/** True when the guard holds: every write of the statement is conditioned on it. */
export const PARENT_GUARD_OK = '(SELECT ok FROM guard)';

/**
 * The inserted ids when the guard held; otherwise a row with no id, and the parents it locked
 * with their current states (a parent missing from those was locked by another writer, or is gone).
 */
export const PARENT_GUARD_RESULT = `
    SELECT id, NULL::uuid AS parent_id, NULL::text AS parent_state
    FROM inserted, (SELECT count(*) FROM wake) AS hinted, (SELECT count(*) FROM parent_wake) AS parents_hinted
    UNION ALL SELECT NULL, l.id, l.state FROM locked l WHERE NOT ${PARENT_GUARD_OK}
    UNION ALL SELECT NULL, NULL, NULL WHERE NOT ${PARENT_GUARD_OK}`;

/** What a guarded enqueue did: inserted (`ok`), or wrote nothing and reports the parents it saw. */
export type GuardedEnqueue =
  | { readonly ok: true; readonly ids: Set<string> }
  | { readonly ok: false; readonly ids: Set<string>; readonly locked: ReadonlyMap<string, JobState> };
