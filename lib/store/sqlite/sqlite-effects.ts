import { ALL_PARENTS_SUCCEEDED, type HistoryPolicy } from '../../core/index.js';
import type { SqliteNaming } from './sqlite-naming.js';

/**
 * An entry's time: the instant its statement wrote to the job (every write of a state sets
 * updated_at; the settle cascade dates the dependants it releases or cancels by the write of the
 * parent that ended), on the store's clock. So an end of a lease is compared with its deadline on
 * the clock its fence used, as PostgreSQL's statement time does, and a store on a manual clock
 * keeps its history, and its dependants' times, on that clock too.
 */
const WRITTEN_AT = 'NEW.updated_at';
const TERMINAL = `('succeeded', 'dead_lettered', 'cancelled', 'quarantined')`;
const DEAD_LETTER = `('dead_lettered', 'quarantined')`;
/**
 * An edge from an ended parent p (a row of the ended work table) that settles: open, and either a
 * `dependsOn` edge, or a sequence's whose parent is clear of its line and whose failure does not
 * hold the sequence (docs/sequences.md).
 */
const SETTLES = `d.settled = 0 AND (d.sequence IS NULL OR (p.clear AND NOT (d.sequence IS 'block' AND p.state IN ${DEAD_LETTER})))`;
/** A SQL string literal. */
const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;
/** core's historyError: the error that ended an attempt (even when it repeats the last one), or one the change newly set. */
const ERROR_OF_CHANGE = `CASE WHEN NEW.last_error IS NOT OLD.last_error OR (OLD.state = 'running' AND NEW.state <> 'succeeded') THEN NEW.last_error END`;

const COUNTING_TRIGGERS = ['jobs_count_insert', 'jobs_count_update', 'jobs_count_delete'];

/**
 * The counting triggers: each stored job counts once under its (queue, state) in the counts
 * table. With one writer at a time nothing queues on a count's row, so each change updates it
 * directly. SQLite has no TRUNCATE, and a DELETE without WHERE on a table with triggers deletes
 * row by row, firing the delete trigger for each.
 */
function countingSql(t: SqliteNaming): string {
  const add = (row: 'NEW') =>
    `INSERT INTO ${t.counts} (queue, state, count) VALUES (${row}.queue, ${row}.state, 1) ON CONFLICT (queue, state) DO UPDATE SET count = count + 1;`;
  const remove = `UPDATE ${t.counts} SET count = count - 1 WHERE queue = OLD.queue AND state = OLD.state;`;
  return `
CREATE TRIGGER ${t.local('jobs_count_insert')} AFTER INSERT ON ${t.jobs}
BEGIN
  ${add('NEW')}
END;
CREATE TRIGGER ${t.local('jobs_count_update')} AFTER UPDATE OF state, queue ON ${t.jobs}
WHEN NEW.state IS NOT OLD.state OR NEW.queue IS NOT OLD.queue
BEGIN
  ${remove}
  ${add('NEW')}
END;
CREATE TRIGGER ${t.local('jobs_count_delete')} AFTER DELETE ON ${t.jobs}
BEGIN
  ${remove}
END;`;
}

/**
 * The triggers that apply the effects of a state change inside the statement that made it: history
 * entries (as the policy allows), dependency settlement, and the job counts (see countingSql).
 *
 * A parent that becomes terminal settles its whole cascade in one pass, never by triggers firing
 * triggers (SQLite allows ~1,000 levels of that, and a chain of 20,000 is legal input): a recursive
 * query finds the parent and every `on_success` dependant that its failure cancels, then the open
 * edges of all of them are settled at once, lowering latches (releasing at zero) or cancelling.
 * The effects are written to a work table first, keyed by the parent, because the edges must be
 * marked settled before the dependants change: with recursive_triggers on, each cancelled
 * dependant fires this trigger again, and it must then find nothing left to settle. So the cascade
 * is correct with the pragma either way. The work table is empty between statements.
 *
 * A dead letter's discard (its cancel) runs it too: it settles the sequence edge its failure held.
 *
 * An `on_failure` dependant is stored as `on_any_terminal` with `fails_only` set (SQLite cannot
 * widen the mode's CHECK; migration 0023), so it settles as that mode does: every parent's end
 * lowers its latch, none cancels it. A parent that did not succeed (over a `dependsOn` edge) sets
 * its `parent_failed`. When its latch reaches 0 with no parent failed, counting this very settle,
 * it is cancelled with ALL_PARENTS_SUCCEEDED instead of released. Read from its own row, so the
 * last parent's settle costs the same however many parents it has. The pass treats it as one more
 * job that ends, so its own edges settle in the same pass, as a cascade-cancelled job's do.
 *
 * SQLite has one writer at a time, so every edge settles in the same transaction, whatever the fan-out.
 */
export function effectsSql(t: SqliteNaming, policy: HistoryPolicy): string {
  const drop = ['jobs_history_insert', 'jobs_history_update', 'jobs_settle', ...COUNTING_TRIGGERS].map((n) => `DROP TRIGGER IF EXISTS ${t.local(n)};`).join('\n');
  const history =
    policy === 'off'
      ? ''
      : `
CREATE TRIGGER ${t.local('jobs_history_insert')} AFTER INSERT ON ${t.jobs}
BEGIN
  INSERT INTO ${t.history} (job_id, name, at, state, attempt, error)
  VALUES (NEW.id, NEW.name, ${WRITTEN_AT}, NEW.state, NEW.attempt, ${policy === 'transitions_and_errors' ? 'NEW.last_error' : 'NULL'});
END;
CREATE TRIGGER ${t.local('jobs_history_update')} AFTER UPDATE ON ${t.jobs}
WHEN NEW.state IS NOT OLD.state OR NEW.attempt IS NOT OLD.attempt
BEGIN
  INSERT INTO ${t.history} (job_id, name, at, state, attempt, error, worker_id, lease_until)
  VALUES (NEW.id, NEW.name, ${WRITTEN_AT}, NEW.state, NEW.attempt,
          ${policy === 'transitions_and_errors' ? ERROR_OF_CHANGE : 'NULL'},
          CASE WHEN NEW.state = 'running' THEN NEW.worker_id WHEN OLD.state = 'running' THEN OLD.worker_id END,
          CASE WHEN OLD.state = 'running' THEN OLD.leased_until END);
END;`;
  // Of an edge from parent p to child c: does p's end count toward c's latch?
  const ended = t.local('dependency_ended');
  // Whether a job is clear of its sequence's line: no open sequence edge leads to it.
  const clearOf = (id: string) => `NOT EXISTS (SELECT 1 FROM ${t.dependencies} i WHERE i.child_id = ${id} AND i.sequence IS NOT NULL AND i.settled = 0)`;
  // A sequence edge releases however its parent ended, and never cancels; nor does any edge of an
  // on_any_terminal dependant, which an on_failure one is stored as.
  const satisfied = `(p.state = 'succeeded' OR d.sequence IS NOT NULL OR c.dependency_mode IS 'on_any_terminal')`;
  // Of the same edge: a sequence edge that settles now.
  const sequenceSettles = `(d.sequence IS NOT NULL AND p.clear AND NOT (d.sequence IS 'block' AND p.state IN ${DEAD_LETTER}))`;
  // Of the same edge: does it tell an on_failure dependant that a parent failed?
  const fails = `(c.fails_only = 1 AND d.sequence IS NULL AND p.state <> 'succeeded')`;
  // Of a dependant (the updated row) and what this pass settles of its edges (e): an on_failure one
  // whose latch this pass ends with no parent failed, counting this settle. It is cancelled.
  const allSucceeded = `(${t.jobs}.fails_only = 1 AND ${t.jobs}.parent_failed = 0 AND NOT e.failed AND ${t.jobs}.pending_parents - e.satisfied <= 0)`;
  const cancels = `(e.failure IS NOT NULL OR ${allSucceeded})`;
  return `${drop}
${history}
${countingSql(t)}
-- Empty between statements, so it is made anew: an older install's has other columns.
DROP TABLE IF EXISTS ${t.cascade};
CREATE TABLE ${t.cascade} (
  origin    TEXT    NOT NULL,
  child_id  TEXT    NOT NULL,
  satisfied INTEGER NOT NULL,
  failure   TEXT,
  failed    INTEGER NOT NULL,
  PRIMARY KEY (origin, child_id)
);
CREATE TABLE IF NOT EXISTS ${t.local('dependency_ended')} (
  origin    TEXT    NOT NULL,
  id        TEXT    NOT NULL,
  state     TEXT    NOT NULL,
  clear     INTEGER NOT NULL,
  PRIMARY KEY (origin, id)
);
CREATE TRIGGER ${t.local('jobs_settle')} AFTER UPDATE OF state ON ${t.jobs}
WHEN ((NEW.state IN ${TERMINAL} AND OLD.state NOT IN ${TERMINAL}) OR (NEW.state = 'cancelled' AND OLD.state IN ${DEAD_LETTER}))
  AND EXISTS (SELECT 1 FROM ${t.dependencies} WHERE parent_id = NEW.id AND settled = 0)
BEGIN
  -- The parents whose edges settle now, as they will have ended, each with whether it is clear of
  -- its sequence's line (its own sequence edge settled), which its sequence edges wait for:
  -- the parent; each waiting on_success dependant a failure cancels; each waiting on_failure
  -- dependant whose open edges all settle now with no parent failed (clear, then), which is
  -- cancelled; and each job that ended in line (cancelled before its turn) behind a clear parent,
  -- whose turn passes on. An on_failure dependant's edges are known from its latch, without
  -- reading its other edges: 1 open, the one settling; or 2, its sequence edge from a job this
  -- pass ends in line and a dependsOn edge from the parent, which succeeded (any other parent this
  -- pass ends was cancelled, and counts as failed).
  INSERT INTO ${ended} (origin, id, state, clear)
  SELECT NEW.id, id, state, max(clear) FROM (
    WITH RECURSIVE ended(id, state, clear) AS (
      SELECT NEW.id, NEW.state, ${clearOf('NEW.id')}
      UNION
      SELECT c.id, 'cancelled', ${clearOf('c.id')} FROM ended p
        JOIN ${t.dependencies} d ON d.parent_id = p.id AND d.settled = 0 AND d.sequence IS NULL
        JOIN ${t.jobs} c ON c.id = d.child_id
      WHERE p.state <> 'succeeded' AND c.state = 'awaiting_parents' AND c.dependency_mode IS NOT 'on_any_terminal'
      UNION
      SELECT c.id, 'cancelled', 1 FROM ended p
        JOIN ${t.dependencies} d ON d.parent_id = p.id AND d.settled = 0
        JOIN ${t.jobs} c ON c.id = d.child_id
      WHERE c.fails_only = 1 AND c.parent_failed = 0 AND c.state = 'awaiting_parents' AND (
        (c.pending_parents = 1 AND ((d.sequence IS NULL AND p.state = 'succeeded') OR ${sequenceSettles}))
        OR (c.pending_parents = 2 AND ${sequenceSettles} AND NEW.state = 'succeeded' AND p.id <> NEW.id AND EXISTS (
          SELECT 1 FROM ${t.dependencies} o WHERE o.child_id = c.id AND o.parent_id = NEW.id AND o.settled = 0 AND o.sequence IS NULL)))
      UNION
      SELECT c.id, c.state, 1 FROM ended p
        JOIN ${t.dependencies} d ON d.parent_id = p.id AND d.settled = 0 AND d.sequence IS NOT NULL
        JOIN ${t.jobs} c ON c.id = d.child_id
      WHERE p.clear AND NOT (d.sequence IS 'block' AND p.state IN ${DEAD_LETTER}) AND c.state IN ${TERMINAL}
    )
    SELECT id, state, clear FROM ended
  ) GROUP BY id;
  INSERT INTO ${t.cascade} (origin, child_id, satisfied, failure, failed)
  SELECT NEW.id, d.child_id,
    sum(${satisfied}),
    min(CASE WHEN NOT ${satisfied} THEN 'parent ' || p.id || ' ended ' || p.state END),
    max(${fails})
  FROM ${ended} p
    JOIN ${t.dependencies} d ON d.parent_id = p.id AND ${SETTLES}
    JOIN ${t.jobs} c ON c.id = d.child_id
  WHERE p.origin = NEW.id
  GROUP BY d.child_id;
  -- Probed by parent (parent_id IN ...): with only the EXISTS, SQLite scans every open edge of
  -- the table, so each parent's end would cost as much as all the edges still waiting.
  UPDATE ${t.dependencies} SET settled = 1
  WHERE settled = 0 AND parent_id IN (SELECT id FROM ${ended} WHERE origin = NEW.id) AND EXISTS (
    SELECT 1 FROM ${ended} p
    WHERE p.origin = NEW.id AND p.id = ${t.dependencies}.parent_id
      AND (${t.dependencies}.sequence IS NULL OR (p.clear AND NOT (${t.dependencies}.sequence IS 'block' AND p.state IN ${DEAD_LETTER}))));
  UPDATE ${t.jobs} SET
    pending_parents = CASE WHEN e.failure IS NULL THEN pending_parents - e.satisfied ELSE 0 END,
    parent_failed = max(parent_failed, e.failed),
    state = CASE WHEN ${cancels} THEN 'cancelled' WHEN pending_parents - e.satisfied <= 0 THEN 'scheduled' ELSE state END,
    run_at = CASE WHEN NOT ${cancels} AND pending_parents - e.satisfied <= 0 THEN max(run_at, ${WRITTEN_AT}) ELSE run_at END,
    last_error = CASE WHEN e.failure IS NOT NULL THEN e.failure WHEN ${allSucceeded} THEN ${literal(ALL_PARENTS_SUCCEEDED)} ELSE last_error END,
    finished_at = CASE WHEN ${cancels} THEN ${WRITTEN_AT} ELSE finished_at END,
    updated_at = ${WRITTEN_AT}
  FROM (SELECT child_id, satisfied, failure, failed FROM ${t.cascade} WHERE origin = NEW.id) e
  WHERE ${t.jobs}.id = e.child_id AND ${t.jobs}.state = 'awaiting_parents';
  DELETE FROM ${t.cascade} WHERE origin = NEW.id;
  DELETE FROM ${ended} WHERE origin = NEW.id;
END;`;
}
