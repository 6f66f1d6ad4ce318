import type { Database } from 'better-sqlite3';
import { cutPage, LIST_SCAN_LIMIT, matchesFilters, type DriverListParams, type ScannedJob } from '../../job-page.js';
import type { JobRow } from '../../job-row.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import { fromSqliteRow, type SqliteJobRow } from '../sqlite-row.js';

/**
 * One page of jobs, newest first, older than the job `before` names (or from the newest). The scan
 * reads at most LIST_SCAN_LIMIT jobs: of one state backwards through the (state) index, whose
 * entries are in rowid (seq) order, or of all states backwards through the table itself. It is
 * stepped row by row and stopped as soon as the page is cut, so a common filter reads about a
 * page of jobs. Null when `before` names no stored job.
 */
export function listJobsQuery(db: Database, t: SqliteNaming) {
  const cursor = db.prepare(`SELECT seq FROM ${t.jobs} WHERE id = ?`).pluck();
  const below = `seq < coalesce(@below, 9223372036854775807) ORDER BY seq DESC LIMIT @scan`;
  const allStates = db.prepare(`SELECT * FROM ${t.jobs} WHERE ${below}`);
  // COLLATE NOCASE is what lets this statement, and no other, use the state index (migration 0012).
  const oneState = db.prepare(`SELECT * FROM ${t.jobs} WHERE state = @state COLLATE NOCASE AND ${below}`);
  function* scan(params: DriverListParams, below: number | null, limit: number): Generator<ScannedJob<SqliteJobRow>> {
    const rows = (params.state === undefined ? allStates.iterate({ below, scan: limit }) : oneState.iterate({ below, scan: limit, state: params.state })) as IterableIterator<SqliteJobRow>;
    let position = 0;
    for (const row of rows) yield { row, id: row.id, position: ++position, matches: matchesFilters(row, params) };
  }
  return (params: DriverListParams, limit = LIST_SCAN_LIMIT): { rows: JobRow[]; next: string | null } | null => {
    let below: number | null = null;
    if (params.before !== undefined) {
      below = cursor.get(params.before) as number | undefined ?? null;
      if (below === null) return null;
    }
    const page = cutPage(scan(params, below, limit), params.limit, limit);
    return { rows: page.rows.map(fromSqliteRow), next: page.next };
  };
}
