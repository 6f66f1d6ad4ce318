import type { Database } from 'better-sqlite3';
import type { HistoryTrimResult } from '../../job-store.js';
import type { SqliteNaming } from '../sqlite-naming.js';

/**
 * One pass of the history trim, bounded by what was written since the last one: the entries after
 * its place in the log (the maintenance table), up to `limit`, and never past what every observer
 * has passed; each job among them is cut down to its newest `keep` entries, and the place moves to
 * the last entry read. SQLite has one writer, so ids commit in order and the place never skips one.
 */
export function historyTrimQuery(db: Database, t: SqliteNaming) {
  const place = db.prepare(`SELECT last_id FROM ${t.maintenance} WHERE task = 'history_trim'`).pluck();
  const upto = db.prepare(`SELECT min(last_id) FROM ${t.cursors}`).pluck();
  const batch = db.prepare(`SELECT id, job_id FROM ${t.history} WHERE id > ? AND id <= ? ORDER BY id LIMIT ?`);
  const trimJob = db.prepare(`
    DELETE FROM ${t.history} WHERE id IN (SELECT id FROM ${t.history} WHERE job_id = @job ORDER BY id DESC LIMIT -1 OFFSET @keep) AND id <= @upto`);
  const move = db.prepare(`
    INSERT INTO ${t.maintenance} (task, last_id, updated_at) VALUES ('history_trim', @id, @now)
    ON CONFLICT (task) DO UPDATE SET last_id = @id, updated_at = @now`);
  return (keep: number, limit: number, now: number): HistoryTrimResult => {
    const after = (place.get() as number | undefined) ?? 0;
    const until = (upto.get() as number | null) ?? Number.MAX_SAFE_INTEGER;
    const rows = batch.all(after, until, limit) as { id: number; job_id: string }[];
    let trimmed = 0;
    for (const job of new Set(rows.map((row) => row.job_id))) trimmed += trimJob.run({ job, keep, upto: until }).changes;
    if (rows.length > 0) move.run({ id: rows.at(-1)!.id, now });
    return { trimmed, examined: rows.length };
  };
}
