import type { HistoryPolicy } from '../../core/index.js';
import type { SqliteNaming } from './sqlite-naming.js';

const NOW = `CAST(unixepoch('subsec') * 1000 AS INTEGER)`;
const TERMINAL = `('succeeded', 'dead_lettered', 'cancelled', 'quarantined')`;
/** core's historyError: the error that ended an attempt (even when it repeats the last one), or one the change newly set. */
const ERROR_OF_CHANGE = `CASE WHEN NEW.last_error IS NOT OLD.last_error OR (OLD.state = 'running' AND NEW.state <> 'succeeded') THEN NEW.last_error END`;

/**
 * The triggers that apply the effects of a state change inside the statement that made it: history
 * entries (as the policy allows) and dependency settlement. A parent that becomes terminal lowers
 * the latches of its open edges' children (releasing them at zero) or cancels `on_success` ones,
 * whose own change fires the trigger again (recursive_triggers must be on) and so cascades.
 * SQLite has one writer at a time, so every edge settles in the same transaction, whatever the fan-out.
 */
export function effectsSql(t: SqliteNaming, policy: HistoryPolicy): string {
  const drop = ['jobs_history_insert', 'jobs_history_update', 'jobs_settle'].map((n) => `DROP TRIGGER IF EXISTS ${t.local(n)};`).join('\n');
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
  const satisfied = `(NEW.state = 'succeeded' OR dependency_mode = 'on_any_terminal')`;
  return `${drop}
${history}
CREATE TRIGGER ${t.local('jobs_settle')} AFTER UPDATE OF state ON ${t.jobs}
WHEN NEW.state IN ${TERMINAL} AND OLD.state NOT IN ${TERMINAL}
BEGIN
  UPDATE ${t.jobs} SET
    pending_parents = CASE WHEN ${satisfied} THEN pending_parents - 1 ELSE 0 END,
    state = CASE WHEN NOT ${satisfied} THEN 'cancelled' WHEN pending_parents - 1 <= 0 THEN 'scheduled' ELSE state END,
    run_at = CASE WHEN ${satisfied} AND pending_parents - 1 <= 0 THEN max(run_at, ${NOW}) ELSE run_at END,
    last_error = CASE WHEN NOT ${satisfied} THEN 'parent ' || NEW.id || ' ended ' || NEW.state ELSE last_error END,
    finished_at = CASE WHEN NOT ${satisfied} THEN ${NOW} ELSE finished_at END,
    updated_at = ${NOW}
  WHERE state = 'awaiting_parents' AND id IN (SELECT child_id FROM ${t.dependencies} WHERE parent_id = NEW.id AND settled = 0);
  UPDATE ${t.dependencies} SET settled = 1 WHERE parent_id = NEW.id AND settled = 0;
END;`;
}
