import type { Database } from 'better-sqlite3';
import type { JobState } from '../../../core/index.js';
import { limitOf } from '../../effect-params.js';
import type { ConcurrencyLimit, HistoryEntry, ObserverLease, ParentOutput } from '../../job-store.js';
import type { SqliteNaming } from '../sqlite-naming.js';

interface SqliteHistoryRow {
  id: number;
  job_id: string;
  name: string;
  at: number;
  state: JobState;
  attempt: number;
  error: string | null;
}

const entry = (row: SqliteHistoryRow): HistoryEntry => ({
  id: row.id,
  position: String(row.id),
  jobId: row.job_id,
  name: row.name,
  at: new Date(row.at),
  state: row.state,
  attempt: row.attempt,
  error: row.error,
});

/** The statements behind dependencies, limits, history, observers and retention, run inside the store's transactions. */
export function effectsQueries(db: Database, t: SqliteNaming) {
  const ancestors = db.prepare(`
    WITH RECURSIVE ancestors(id) AS (
      SELECT parent_id FROM ${t.dependencies} WHERE child_id = ?
      UNION
      SELECT d.parent_id FROM ${t.dependencies} d JOIN ancestors a ON d.child_id = a.id
    )
    SELECT output FROM ${t.jobs} WHERE id = ? AND id IN (SELECT id FROM ancestors)`);
  const openTerminalEdges = db.prepare(`
    SELECT d.child_id, d.parent_id FROM ${t.dependencies} d JOIN ${t.jobs} p ON p.id = d.parent_id
    WHERE d.settled = 0 AND p.state IN ('succeeded', 'dead_lettered', 'cancelled', 'quarantined') LIMIT ?`);
  // An edge the trigger missed is settled by replaying what the trigger does for that one edge.
  const settleOne = db.prepare(`
    UPDATE ${t.jobs} SET
      pending_parents = CASE WHEN @ok THEN pending_parents - 1 ELSE 0 END,
      state = CASE WHEN NOT @ok THEN 'cancelled' WHEN pending_parents - 1 <= 0 THEN 'scheduled' ELSE state END,
      run_at = CASE WHEN @ok AND pending_parents - 1 <= 0 THEN max(run_at, @now) ELSE run_at END,
      last_error = CASE WHEN NOT @ok THEN 'parent ' || @parent || ' ended ' || @parent_state ELSE last_error END,
      finished_at = CASE WHEN NOT @ok THEN @now ELSE finished_at END,
      updated_at = @now
    WHERE id = @child AND state = 'awaiting_parents'`);
  const parentState = db.prepare(`SELECT state FROM ${t.jobs} WHERE id = ?`).pluck();
  const anyOpenEdge = db
    .prepare(`SELECT EXISTS (SELECT 1 FROM ${t.dependencies} WHERE settled = 0 AND parent_id IN (SELECT value FROM json_each(?)))`)
    .pluck();
  const childMode = db.prepare(`SELECT dependency_mode FROM ${t.jobs} WHERE id = ?`).pluck();
  const markSettled = db.prepare(`UPDATE ${t.dependencies} SET settled = 1 WHERE child_id = ? AND parent_id = ? AND settled = 0`);
  const setLimit = db.prepare(`INSERT INTO ${t.limits} (key, max, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET max = excluded.max, updated_at = excluded.updated_at`);
  const dropLimit = db.prepare(`DELETE FROM ${t.limits} WHERE key = ?`);
  const listLimits = db.prepare(`SELECT key, max FROM ${t.limits} ORDER BY key`);
  const history = db.prepare(`SELECT * FROM ${t.history} WHERE job_id = ? ORDER BY id`);
  const historyRead = db.prepare(`SELECT * FROM ${t.history} WHERE id > ? ORDER BY id LIMIT ?`);
  const historyTrim = db.prepare(`
    DELETE FROM ${t.history} WHERE id IN (
      SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY job_id ORDER BY id DESC) AS n FROM ${t.history})
      WHERE n > ? AND id <= coalesce((SELECT min(last_id) FROM ${t.cursors}), 9223372036854775807) LIMIT ?)`);
  const lease = db.prepare(`
    INSERT INTO ${t.cursors} (observer, last_id, leased_by, leased_until, updated_at)
    VALUES (@observer, coalesce((SELECT max(id) FROM ${t.history}), 0), @worker, @now + @lease, @now)
    ON CONFLICT (observer) DO UPDATE SET leased_by = @worker, leased_until = @now + @lease, updated_at = @now
    WHERE (leased_by IS NULL OR leased_by = @worker OR leased_until <= @now) AND (retry_at IS NULL OR retry_at <= @now)
    RETURNING last_id, failures`);
  const commit = db.prepare(`
    UPDATE ${t.cursors} SET last_id = max(last_id, @last_id), failures = 0, retry_at = NULL, last_error = NULL, updated_at = @now
    WHERE observer = @observer AND leased_by = @worker AND leased_until > @now`);
  const fail = db.prepare(`
    UPDATE ${t.cursors} SET failures = failures + 1, retry_at = @now + @delay, last_error = @error, leased_by = NULL, leased_until = NULL, updated_at = @now
    WHERE observer = @observer AND leased_by = @worker AND leased_until > @now`);
  const doomed = db.prepare(`
    SELECT id FROM ${t.jobs} j
    WHERE state IN ('succeeded', 'cancelled') AND finished_at < ?
      AND NOT EXISTS (SELECT 1 FROM ${t.dependencies} d WHERE d.parent_id = j.id AND d.settled = 0)
    ORDER BY finished_at LIMIT ?`).pluck();
  const purgeHistory = db.prepare(`DELETE FROM ${t.history} WHERE job_id = ?`);
  const purgeEdges = db.prepare(`DELETE FROM ${t.dependencies} WHERE child_id = @id OR parent_id = @id`);
  const purgeJob = db.prepare(`DELETE FROM ${t.jobs} WHERE id = ?`);

  return {
    /** Whether any of these jobs still has a dependant waiting on it: finishing it may release one. */
    hasOpenEdges: (jobIds: readonly string[]): boolean => jobIds.length > 0 && anyOpenEdge.get(JSON.stringify(jobIds)) === 1,
    parentOutput: (jobId: string, ancestorId: string): ParentOutput => {
      const row = ancestors.get(jobId, ancestorId) as { output: string | null } | undefined;
      return row && row.output !== null ? { found: true, output: JSON.parse(row.output) as unknown } : { found: false, output: undefined };
    },
    settle: (limit: number, now: number): number => {
      const edges = openTerminalEdges.all(limit) as { child_id: string; parent_id: string }[];
      for (const e of edges) {
        const state = parentState.get(e.parent_id) as JobState;
        const ok = state === 'succeeded' || childMode.get(e.child_id) === 'on_any_terminal';
        settleOne.run({ ok: ok ? 1 : 0, child: e.child_id, parent: e.parent_id, parent_state: state, now });
        markSettled.run(e.child_id, e.parent_id);
      }
      return edges.length;
    },
    setLimit: (key: string, max: number | null, now: number): void => {
      if (max === null) dropLimit.run(key);
      else setLimit.run(key, max, now);
    },
    listLimits: (): ConcurrencyLimit[] => (listLimits.all() as { key: string; max: number }[]).map((r) => limitOf(r.key, r.max)),
    history: (jobId: string): HistoryEntry[] => (history.all(jobId) as SqliteHistoryRow[]).map(entry),
    historyRead: (afterId: number, limit: number): HistoryEntry[] => (historyRead.all(afterId, limit) as SqliteHistoryRow[]).map(entry),
    historyTrim: (keep: number, limit: number): number => historyTrim.run(keep, limit).changes,
    observerLease: (observer: string, worker: string, leaseMs: number, now: number): ObserverLease | null => {
      const row = lease.get({ observer, worker, lease: leaseMs, now }) as { last_id: number; failures: number } | undefined;
      return row ? { observer, position: String(row.last_id), failures: row.failures } : null;
    },
    observerCommit: (observer: string, worker: string, lastId: number, now: number): boolean => commit.run({ observer, worker, last_id: lastId, now }).changes === 1,
    observerFail: (observer: string, worker: string, error: string, delay: number, now: number): boolean =>
      fail.run({ observer, worker, error, delay, now }).changes === 1,
    purge: (olderThanMs: number, limit: number, now: number): number => {
      const ids = doomed.all(now - olderThanMs, limit) as string[];
      for (const id of ids) {
        purgeHistory.run(id);
        purgeEdges.run({ id });
        purgeJob.run(id);
      }
      return ids.length;
    },
  };
}
