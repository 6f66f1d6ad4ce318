import type { HistoryPolicy } from '../../core/index.js';
import type { SqliteNaming } from './sqlite-naming.js';

const NOW = `CAST(unixepoch('subsec') * 1000 AS INTEGER)`;
const TERMINAL = `('succeeded', 'dead_lettered', 'cancelled', 'quarantined')`;
const DEAD_LETTER = `('dead_lettered', 'quarantined')`;
/**
 * An edge from an ended parent p (a row of the ended work table) that settles: open, and either a
 * `dependsOn` edge, or a sequence's whose parent is clear of its line and whose failure does not
 * hold the sequence (docs/sequences.md).
 */
const SETTLES = `d.settled = 0 AND (d.sequence IS NULL OR (p.clear AND NOT (d.sequence IS 'block' AND p.state IN ${DEAD_LETTER})))`;
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
  VALUES (NEW.id, NEW.name, ${NOW}, NEW.state, NEW.attempt, ${policy === 'transitions_and_errors' ? 'NEW.last_error' : 'NULL'});
END;
CREATE TRIGGER ${t.local('jobs_history_update')} AFTER UPDATE ON ${t.jobs}
WHEN NEW.state IS NOT OLD.state OR NEW.attempt IS NOT OLD.attempt
BEGIN
  INSERT INTO ${t.history} (job_id, name, at, state, attempt, error)
  VALUES (NEW.id, NEW.name, ${NOW}, NEW.state, NEW.attempt,
          ${policy === 'transitions_and_errors' ? ERROR_OF_CHANGE : 'NULL'});
END;`;
  // Of an edge from parent p to child c: does p's end count toward c's latch?
  const ended = t.local('dependency_ended');
  // Whether a job is clear of its sequence's line: no open sequence edge leads to it.
  const clearOf = (id: string) => `NOT EXISTS (SELECT 1 FROM ${t.dependencies} i WHERE i.child_id = ${id} AND i.sequence IS NOT NULL AND i.settled = 0)`;
  // A sequence edge releases however its parent ended, and never cancels.
  const satisfied = `(p.state = 'succeeded' OR d.sequence IS NOT NULL OR c.dependency_mode IS 'on_any_terminal')`;
  return `${drop}
${history}
${countingSql(t)}
CREATE TABLE IF NOT EXISTS ${t.cascade} (
  origin    TEXT    NOT NULL,
  child_id  TEXT    NOT NULL,
  satisfied INTEGER NOT NULL,
  failure   TEXT,
  cancelled INTEGER NOT NULL,
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
  -- the parent; each waiting on_success dependant a failure cancels; and each job that ended in
  -- line (cancelled before its turn) behind a clear parent, whose turn passes on.
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
      SELECT c.id, c.state, 1 FROM ended p
        JOIN ${t.dependencies} d ON d.parent_id = p.id AND d.settled = 0 AND d.sequence IS NOT NULL
        JOIN ${t.jobs} c ON c.id = d.child_id
      WHERE p.clear AND NOT (d.sequence IS 'block' AND p.state IN ${DEAD_LETTER}) AND c.state IN ${TERMINAL}
    )
    SELECT id, state, clear FROM ended
  ) GROUP BY id;
  INSERT INTO ${t.cascade} (origin, child_id, satisfied, failure, cancelled)
  SELECT NEW.id, d.child_id,
    sum(${satisfied}),
    min(CASE WHEN NOT ${satisfied} THEN 'parent ' || p.id || ' ended ' || p.state END),
    min(CASE WHEN NOT ${satisfied} THEN 'parent ' || p.id || ' ended ' || p.state END) IS NOT NULL AND c.state = 'awaiting_parents'
  FROM ${ended} p
    JOIN ${t.dependencies} d ON d.parent_id = p.id AND ${SETTLES}
    JOIN ${t.jobs} c ON c.id = d.child_id
  WHERE p.origin = NEW.id
  GROUP BY d.child_id;
  UPDATE ${t.dependencies} SET settled = 1
  WHERE settled = 0 AND EXISTS (
    SELECT 1 FROM ${ended} p
    WHERE p.origin = NEW.id AND p.id = ${t.dependencies}.parent_id
      AND (${t.dependencies}.sequence IS NULL OR (p.clear AND NOT (${t.dependencies}.sequence IS 'block' AND p.state IN ${DEAD_LETTER}))));
  UPDATE ${t.jobs} SET
    pending_parents = CASE WHEN e.failure IS NULL THEN pending_parents - e.satisfied ELSE 0 END,
    state = CASE WHEN e.failure IS NOT NULL THEN 'cancelled' WHEN pending_parents - e.satisfied <= 0 THEN 'scheduled' ELSE state END,
    run_at = CASE WHEN e.failure IS NULL AND pending_parents - e.satisfied <= 0 THEN max(run_at, ${NOW}) ELSE run_at END,
    last_error = CASE WHEN e.failure IS NOT NULL THEN e.failure ELSE last_error END,
    finished_at = CASE WHEN e.failure IS NOT NULL THEN ${NOW} ELSE finished_at END,
    updated_at = ${NOW}
  FROM (SELECT child_id, satisfied, failure FROM ${t.cascade} WHERE origin = NEW.id) e
  WHERE ${t.jobs}.id = e.child_id AND ${t.jobs}.state = 'awaiting_parents';
  DELETE FROM ${t.cascade} WHERE origin = NEW.id;
  DELETE FROM ${ended} WHERE origin = NEW.id;
END;`;
}
