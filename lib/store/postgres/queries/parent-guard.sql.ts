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
 * So the statement locks the parents it leaves open edges to (`parents`, distinct ids) `FOR KEY
 * SHARE SKIP LOCKED`, in id order, and writes nothing unless it locked every one and none has
 * finished. That lock conflicts only with `FOR UPDATE`, which every write that makes a job terminal
 * takes on its row before it writes (the outcome write, the sweep, a final relinquish, an
 * operator's cancel, a cascade in the settle function):
 * - a write that finishes a parent this enqueue has locked waits for the enqueue to commit, and
 *   its settling, which runs after, sees the new edge;
 * - a write already finishing it holds `FOR UPDATE`, so SKIP LOCKED passes the row by and the
 *   guard fails; the caller waits for that writer and plans again from the parent's new state;
 * - every other write of the row (a heartbeat, a claim, a retry, a relinquish that requeues) is a
 *   plain UPDATE, whose `FOR NO KEY UPDATE` does not conflict: however long the enqueue's
 *   transaction stays open, the parent's lease is renewed and a due parent is claimed.
 *
 * Why before the write: a key-share lock on a row that a plain UPDATE changed reads the version
 * the statement's snapshot saw, even once the updater committed, and waits (SKIP LOCKED or not)
 * for a lock the updater took on its new version. A writer that updated first and locked after
 * would let the guard read a finished parent as open, and could deadlock with it. Locked first,
 * the row counts as changed in its key, and the guard skips it, or reads its newest version.
 *
 * Why this and not a deferred constraint trigger that locks the parents only at commit: that
 * trigger runs once per edge, in insertion order, so a commit waiting there on one parent while
 * holding another can deadlock with an outcome batch that finishes both, and PostgreSQL would then
 * abort the caller's COMMIT. Here nothing an enqueue holds is ever waited on by a heartbeat.
 *
 * The lock never waits, so an enqueue holding some parents never waits for another; the caller
 * waits only while holding nothing (see postgres-parent-guard.ts).
 */
/** `parents` is the placeholder of the uuid[] parameter that lists them. */
export const PARENT_GUARD_CTES = (t: PostgresNaming, parents: string) => `
    locked AS MATERIALIZED (
      SELECT id, state FROM ${t.jobs} WHERE id = ANY(${parents}::uuid[]) ORDER BY id FOR KEY SHARE SKIP LOCKED
    ), guard AS MATERIALIZED (
      SELECT count(*) = cardinality(${parents}::uuid[]) AND count(*) FILTER (WHERE state IN ${TERMINAL}) = 0 AS ok FROM locked
    ),`;

/** True when the guard holds: every write of the statement is conditioned on it. */
export const PARENT_GUARD_OK = '(SELECT ok FROM guard)';

/**
 * The inserted ids when the guard held; otherwise a row with no id, and the parents it locked
 * with their current states (a parent missing from those was locked by another writer, or is gone).
 */
export const PARENT_GUARD_RESULT = `
    SELECT id, NULL::uuid AS parent_id, NULL::text AS parent_state
    FROM inserted, (SELECT count(*) FROM wake) AS hinted
    UNION ALL SELECT NULL, l.id, l.state FROM locked l WHERE NOT ${PARENT_GUARD_OK}
    UNION ALL SELECT NULL, NULL, NULL WHERE NOT ${PARENT_GUARD_OK}`;

/** What a guarded enqueue did: inserted (`ok`), or wrote nothing and reports the parents it saw. */
export type GuardedEnqueue =
  | { readonly ok: true; readonly ids: Set<string> }
  | { readonly ok: false; readonly ids: Set<string>; readonly locked: ReadonlyMap<string, JobState> };
