import type { JobState } from '../../../core/index.js';
import { cutPage, LIST_SCAN_LIMIT, type DriverListParams, type ScannedJob } from '../../job-page.js';
import type { JobRow } from '../../job-row.js';
import type { MysqlExecutor, MysqlStatement } from '../mysql-executor.js';
import { toMysqlInstant } from '../mysql-instant.js';
import type { MysqlNaming } from '../mysql-naming.js';
import { fromMysqlRow, JOB_COLUMNS, type MysqlJobRow } from '../mysql-row.js';

const LAST_SEQ = '9223372036854775807';

/**
 * How each order reads: which side of the cursor it reads, which side of the scan's last job it
 * keeps, its direction, and each bound when there is none.
 */
const ORDERS = {
  newest: { side: '<', from: LAST_SEQ, within: '>=', to: '0', direction: 'DESC' },
  oldest: { side: '>', from: '0', within: '<=', to: LAST_SEQ, direction: 'ASC' },
} as const;

/**
 * Where a listing's scan reads, in seq order. All states: the primary key. One state: jobs_lease_idx
 * (state, leased_until), whose entries end with the primary key; every job but a running one has
 * no lease (jobs_lease_check), so `leased_until IS NULL` leaves one range of the index in seq
 * order. Running jobs, each with its own lease end, are read whole and sorted: there are as many
 * as the workers hold, whatever the table holds. The index is forced because, for a state most
 * jobs are in, MariaDB prefers walking the primary key and testing each row, which a rare state
 * would pay for with the whole table; and so that a queue filter never tempts it into
 * jobs_lane_idx, which would read and sort every job of that queue.
 */
function scanSource(t: MysqlNaming, state: JobState | undefined): { from: string; where: string; values: unknown[] } {
  if (state === undefined) return { from: `${t.jobs} j FORCE INDEX (PRIMARY)`, where: 'TRUE', values: [] };
  if (state === 'running') return { from: `${t.jobs} j FORCE INDEX (jobs_lease_idx)`, where: `j.state = 'running'`, values: [] };
  return { from: `${t.jobs} j FORCE INDEX (jobs_lease_idx)`, where: 'j.state = ? AND j.leased_until IS NULL', values: [state] };
}

/** The filters other than state, as conditions on the job the scan read; instants as UTC text. */
function filterSql(params: DriverListParams): { sql: string; values: unknown[] } {
  const parts: string[] = [];
  const values: unknown[] = [];
  const add = (sql: string, ...args: unknown[]) => {
    parts.push(sql);
    values.push(...args);
  };
  if (params.queue !== undefined) add('j.queue = ?', params.queue);
  // Byte for byte: a name filter may hold what no ASCII name can (MySQL refuses to compare such
  // text with an ascii column), and the binary collations pad, so 'a ' would equal 'a'.
  if (params.name !== undefined) add('j.name = CAST(? AS BINARY)', params.name);
  if (params.idPrefix !== undefined) add('LEFT(j.id, ?) = ?', params.idPrefix.length, params.idPrefix);
  if (params.enqueuedAfter !== undefined) add('j.created_at >= ?', toMysqlInstant(params.enqueuedAfter));
  if (params.enqueuedBefore !== undefined) add('j.created_at < ?', toMysqlInstant(params.enqueuedBefore));
  return { sql: parts.map((part) => ` AND ${part}`).join(''), values };
}

/**
 * The scan as `cutPage` takes it: the matches in the listing's order, then the scan's last job (its
 * edge) when the statement looked for it and the scan reached it. With an edge, each match before
 * it gets a position short of the edge's, `scan`, which is all the cut compares positions against;
 * without one every job read matched, and its position is its place in the scan.
 */
function* examined(matches: readonly MysqlJobRow[], edge: MysqlJobRow | null, scan: number): Generator<ScannedJob<MysqlJobRow>> {
  let position = 0;
  for (const row of matches) {
    const atEdge = edge !== null && row.seq === edge.seq;
    yield { row, id: row.id, position: atEdge ? scan : ++position, matches: true };
    if (atEdge) return;
  }
  if (edge !== null) yield { row: edge, id: edge.id, position: scan, matches: false };
}

/**
 * One page of jobs past the job the cursor names (or from the start), newest or oldest first, in
 * one script. The scan covers at most `scan` jobs past the cursor (see scanSource): the seq of its
 * last one, the edge, is found first by skipping `scan` entries along the index (for one state the
 * secondary index alone, reading no job); then the index is walked from the cursor to the edge,
 * the other filters tested on each job, and the walk stops at the page size plus one match. So a
 * common filter reads about a page of jobs and a rare one at most `scan`. Without filters every job matches, so the jobs read are the scan
 * itself, each at its true position, and the edge is not looked for.
 *
 * The cursor's seq is read into a session variable by the same script, so a page costs one round
 * trip. Null when the cursor names no stored job.
 */
export async function listJobs(
  db: MysqlExecutor,
  t: MysqlNaming,
  params: DriverListParams,
  scan = LIST_SCAN_LIMIT,
): Promise<{ rows: JobRow[]; next: string | null } | null> {
  const order = ORDERS[params.order];
  const source = scanSource(t, params.state);
  const cursored = params.cursor !== undefined;
  // A cursor that names no job leaves the variable NULL, and the scan then reads nothing.
  const range = `${source.where} AND j.seq ${order.side} ${cursored ? '@list_cursor' : order.from}`;
  const filters = filterSql(params);
  const bounded = filters.sql !== '';
  const statements: MysqlStatement[] = cursored
    ? [{ sql: `SELECT (SELECT seq FROM ${t.jobs} WHERE id = ?) INTO @list_cursor`, values: [params.cursor] }, { sql: 'SELECT @list_cursor AS found_seq' }]
    : [];
  if (bounded) {
    statements.push(
      { sql: `SELECT (SELECT j.seq FROM ${source.from} WHERE ${range} ORDER BY j.seq ${order.direction} LIMIT 1 OFFSET ?) INTO @list_edge`, values: [...source.values, scan - 1] },
      { sql: `SELECT ${JOB_COLUMNS} FROM ${t.jobs} j WHERE j.seq = @list_edge` },
    );
  }
  const within = bounded ? ` AND j.seq ${order.within} COALESCE(@list_edge, ${order.to})` : '';
  statements.push({
    sql: `SELECT ${JOB_COLUMNS} FROM ${source.from} WHERE ${range}${within}${filters.sql} ORDER BY j.seq ${order.direction} LIMIT ?`,
    values: [...source.values, ...filters.values, params.limit + 1],
  });
  const results = await db.script(statements);
  if (cursored && (results[1] as [{ found_seq: number | null }])[0].found_seq === null) return null;
  const edge = bounded ? ((results[cursored ? 3 : 1] as MysqlJobRow[])[0] ?? null) : null;
  const page = cutPage(examined(results.at(-1) as MysqlJobRow[], edge, scan), params.limit, scan);
  return { rows: page.rows.map(fromMysqlRow), next: page.next };
}
