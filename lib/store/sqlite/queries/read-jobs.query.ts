import type { Database } from 'better-sqlite3';
import type { ListJobsParams } from '../../job-store.js';
import type { JobRow } from '../../job-row.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import { fromSqliteRow, type SqliteJobRow } from '../sqlite-row.js';

/** Reads: one job, the filtered listing (newest first), and the dead-letter listing (newest first). */
export function readJobsQuery(db: Database, t: SqliteNaming) {
  const get = db.prepare(`SELECT * FROM ${t.jobs} WHERE id = ?`);
  const list = db.prepare(`
    SELECT * FROM ${t.jobs}
    WHERE (@state IS NULL OR state = @state) AND (@queue IS NULL OR queue = @queue) AND (@name IS NULL OR name = @name)
    ORDER BY seq DESC LIMIT @limit`);
  const deadLettered = db.prepare(`SELECT * FROM ${t.jobs} WHERE state = 'dead_lettered' ORDER BY finished_at DESC, seq DESC LIMIT ?`);
  return {
    get: (jobId: string): JobRow | null => {
      const row = get.get(jobId) as SqliteJobRow | undefined;
      return row ? fromSqliteRow(row) : null;
    },
    list: (params: ListJobsParams & { limit: number }): JobRow[] =>
      (list.all({ state: params.state ?? null, queue: params.queue ?? null, name: params.name ?? null, limit: params.limit }) as SqliteJobRow[]).map(
        fromSqliteRow,
      ),
    deadLettered: (limit: number): JobRow[] => (deadLettered.all(limit) as SqliteJobRow[]).map(fromSqliteRow),
  };
}
