import type { Database } from 'better-sqlite3';
import type { ListJobsParams } from '../../job-store.js';
import type { JobRow } from '../../job-row.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import { fromSqliteRow, type SqliteJobRow } from '../sqlite-row.js';

/** Jobs newest first, each filter optional (a null parameter matches everything). */
export function listJobsQuery(db: Database, t: SqliteNaming) {
  const list = db.prepare(`
    SELECT * FROM ${t.jobs}
    WHERE (@state IS NULL OR state = @state) AND (@queue IS NULL OR queue = @queue) AND (@name IS NULL OR name = @name)
    ORDER BY seq DESC LIMIT @limit`);
  return (params: ListJobsParams & { limit: number }): JobRow[] =>
    (list.all({ state: params.state ?? null, queue: params.queue ?? null, name: params.name ?? null, limit: params.limit }) as SqliteJobRow[]).map(
      fromSqliteRow,
    );
}
