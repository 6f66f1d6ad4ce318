import type { Database } from 'better-sqlite3';
import { MIN_PRIORITY } from '../../../core/index.js';
import type { SqliteNaming } from '../sqlite-naming.js';

/** A due job as the operator reads see it. */
export interface DueEntry {
  readonly queue: string;
  readonly run_at: number;
  readonly seq: number;
}

/**
 * The first `limit` jobs due at `now` in run-time order (run_at, seq), whatever their priority,
 * read from the claim index (priority, run_at, seq): the first `limit` of each priority in use,
 * merged with the first `limit` parked jobs (held back by a limit, claim-lanes.query.ts) by run
 * time. So a read costs at most `limit` entries per priority and `limit` more, and future-dated
 * jobs are never walked.
 */
export function dueInRunOrderQuery(db: Database, t: SqliteNaming) {
  const nextPriority = db.prepare(`SELECT priority FROM ${t.jobs} WHERE state = 'scheduled' AND parked_key IS NULL AND priority > ? ORDER BY priority LIMIT 1`).pluck();
  const due = db.prepare(
    `SELECT queue, run_at, seq FROM ${t.jobs} WHERE state = 'scheduled' AND parked_key IS NULL AND priority = ? AND run_at <= ? ORDER BY run_at, seq LIMIT ?`,
  );
  // Stated as the parked jobs' run-time index states it (migration 0027), so that index serves it.
  const parked = db.prepare(`SELECT queue, run_at, seq FROM ${t.jobs} WHERE state = 'scheduled' AND coalesce(parked_key, '') <> '' AND run_at <= ? ORDER BY run_at, seq LIMIT ?`);
  return (now: number, limit: number): DueEntry[] => {
    const found: DueEntry[] = parked.all(now, limit) as DueEntry[];
    for (let p = nextPriority.get(MIN_PRIORITY - 1) as number | undefined; p !== undefined; p = nextPriority.get(p) as number | undefined) {
      found.push(...(due.all(p, now, limit) as DueEntry[]));
    }
    return found.sort((a, b) => a.run_at - b.run_at || a.seq - b.seq).slice(0, limit);
  };
}
