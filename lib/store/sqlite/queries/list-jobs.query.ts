import type { Database } from 'better-sqlite3';
import { cutPage, LIST_SCAN_LIMIT, matchesFilters, type DriverListParams, type ScannedJob } from '../../job-page.js';
import type { JobRow } from '../../job-row.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import { fromSqliteRow, type SqliteJobRow } from '../sqlite-row.js';

/**
 * One page of jobs past the job the cursor names (or from the start), newest or oldest first. The
 * scan reads at most LIST_SCAN_LIMIT jobs: of one state through the (state) index, whose entries
 * are in rowid (seq) order, or of all states through the table itself, backwards or forwards. It
 * is stepped row by row and stopped as soon as the page is cut, so a common filter reads about a
 * page of jobs. Null when the cursor names no stored job.
 */
export function listJobsQuery(db: Database, t: SqliteNaming) {
  const cursor = db.prepare(`SELECT seq FROM ${t.jobs} WHERE id = ?`).pluck();
  const range = {
    newest: `seq < coalesce(@cursor, 9223372036854775807) ORDER BY seq DESC LIMIT @scan`,
    oldest: `seq > coalesce(@cursor, 0) ORDER BY seq ASC LIMIT @scan`,
  };
  const statements = (order: keyof typeof range) => ({
    allStates: db.prepare(`SELECT * FROM ${t.jobs} WHERE ${range[order]}`),
    // COLLATE NOCASE is what lets this statement, and no other, use the state index (migration 0012).
    oneState: db.prepare(`SELECT * FROM ${t.jobs} WHERE state = @state COLLATE NOCASE AND ${range[order]}`),
  });
  const byOrder = { newest: statements('newest'), oldest: statements('oldest') };
  function* scan(params: DriverListParams, from: number | null, limit: number): Generator<ScannedJob<SqliteJobRow>> {
    const { allStates, oneState } = byOrder[params.order];
    const rows = (
      params.state === undefined ? allStates.iterate({ cursor: from, scan: limit }) : oneState.iterate({ cursor: from, scan: limit, state: params.state })
    ) as IterableIterator<SqliteJobRow>;
    let position = 0;
    for (const row of rows) {
      yield { row, id: row.id, position: ++position, matches: matchesFilters({ id: row.id, queue: row.queue, name: row.name, createdAt: row.created_at }, params) };
    }
  }
  return (params: DriverListParams, limit = LIST_SCAN_LIMIT): { rows: JobRow[]; next: string | null } | null => {
    let from: number | null = null;
    if (params.cursor !== undefined) {
      from = (cursor.get(params.cursor) as number | undefined) ?? null;
      if (from === null) return null;
    }
    const page = cutPage(scan(params, from, limit), params.limit, limit);
    return { rows: page.rows.map(fromSqliteRow), next: page.next };
  };
}
