import type { Database } from 'better-sqlite3';
import { ALL_PARENTS_SUCCEEDED, type JobState } from '../../../core/index.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import { jobStateQuery } from './job-state.query.js';

/**
 * The maintenance pass over dependency edges: settles up to `limit` open edges of terminal parents
 * that the trigger missed, each by replaying what the trigger does for that one edge. An on_failure
 * dependant (stored on_any_terminal with fails_only set, migration 0023) settles as that mode does,
 * remembers a parent that did not succeed in parent_failed, and is cancelled with
 * ALL_PARENTS_SUCCEEDED when the edge ends its latch and no parent failed; the trigger then settles
 * its own dependants, as for any job this cancels.
 */
export function settleDependenciesQuery(db: Database, t: SqliteNaming) {
  // A sequence edge waits while its parent's failure holds the sequence or the parent is still in
  // line (its own sequence edge open), as in the trigger (sqlite-effects.ts).
  const openTerminalEdges = db.prepare(`
    SELECT d.child_id, d.parent_id, d.sequence FROM ${t.dependencies} d JOIN ${t.jobs} p ON p.id = d.parent_id
    WHERE d.settled = 0 AND p.state IN ('succeeded', 'dead_lettered', 'cancelled', 'quarantined')
      AND (d.sequence IS NULL OR (NOT (d.sequence = 'block' AND p.state IN ('dead_lettered', 'quarantined'))
        AND NOT EXISTS (SELECT 1 FROM ${t.dependencies} i WHERE i.child_id = d.parent_id AND i.sequence IS NOT NULL AND i.settled = 0)))
    LIMIT ?`);
  // @failed: the edge is a dependsOn edge whose parent did not succeed. Only an on_failure
  // dependant keeps that; one whose latch this edge ends with no parent failed is cancelled.
  const failed = `(fails_only = 1 AND @failed)`;
  const allSucceeded = `(fails_only = 1 AND parent_failed = 0 AND NOT @failed AND pending_parents - 1 <= 0)`;
  const cancels = `(NOT @ok OR ${allSucceeded})`;
  const settleOne = db.prepare(`
    UPDATE ${t.jobs} SET
      pending_parents = CASE WHEN @ok THEN pending_parents - 1 ELSE 0 END,
      parent_failed = max(parent_failed, ${failed}),
      state = CASE WHEN ${cancels} THEN 'cancelled' WHEN pending_parents - 1 <= 0 THEN 'scheduled' ELSE state END,
      run_at = CASE WHEN NOT ${cancels} AND pending_parents - 1 <= 0 THEN max(run_at, @now) ELSE run_at END,
      last_error = CASE WHEN NOT @ok THEN 'parent ' || @parent || ' ended ' || @parent_state WHEN ${allSucceeded} THEN @all_succeeded ELSE last_error END,
      finished_at = CASE WHEN ${cancels} THEN @now ELSE finished_at END,
      updated_at = @now
    WHERE id = @child AND state = 'awaiting_parents'`);
  const parentState = jobStateQuery(db, t);
  const childMode = db.prepare(`SELECT dependency_mode FROM ${t.jobs} WHERE id = ?`).pluck();
  const markSettled = db.prepare(`UPDATE ${t.dependencies} SET settled = 1 WHERE child_id = ? AND parent_id = ? AND settled = 0`);
  return (limit: number, now: number): number => {
    const edges = openTerminalEdges.all(limit) as { child_id: string; parent_id: string; sequence: string | null }[];
    for (const e of edges) {
      const state = parentState(e.parent_id) as JobState;
      // An on_failure dependant reads 'on_any_terminal' here: a parent's failure never cancels it.
      const ok = state === 'succeeded' || e.sequence !== null || childMode.get(e.child_id) === 'on_any_terminal';
      const failed = e.sequence === null && state !== 'succeeded';
      settleOne.run({ ok: ok ? 1 : 0, failed: failed ? 1 : 0, child: e.child_id, parent: e.parent_id, parent_state: state, all_succeeded: ALL_PARENTS_SUCCEEDED, now });
      markSettled.run(e.child_id, e.parent_id);
    }
    return edges.length;
  };
}
