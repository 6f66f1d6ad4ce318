import { JOB_STATES } from '../../../core/index.js';
import type { JobRow } from '../../job-row.js';
import { cutPage, LIST_SCAN_LIMIT, type DriverListParams } from '../../job-page.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { fromPgRow, jobColumns, type PgJobRow } from '../postgres-row.js';
import { ORDERED_READ_SETTINGS } from './ordered-read.sql.js';

/** How each order reads: which side of the cursor, which direction, and the cursor when none is given. */
const ORDERS = {
  newest: { side: '<', direction: 'DESC', start: '9223372036854775807' },
  oldest: { side: '>', direction: 'ASC', start: '0' },
} as const;

type Order = keyof typeof ORDERS;

/** The jobs of one state past the cursor, in the order's direction through the (state, seq) index. */
function stateScan(t: PostgresNaming, state: string, order: Order): string {
  const { side, direction } = ORDERS[order];
  return `(SELECT j.* FROM ${t.jobs} j WHERE j.state = ${state} AND j.seq ${side} c.seq ORDER BY j.seq ${direction} LIMIT $4)`;
}

/**
 * The filters other than state, on a job the scan read. The enqueue-time bounds arrive as epoch
 * milliseconds; to_timestamp rounds to the microsecond, so a whole millisecond compares exactly.
 */
const MATCHES = `($2::text IS NULL OR s.queue = $2) AND ($3::text IS NULL OR s.name = $3)
        AND ($6::text IS NULL OR left(s.id::text, length($6)) = $6)
        AND ($7::float8 IS NULL OR s.created_at >= to_timestamp($7::float8 / 1000))
        AND ($8::float8 IS NULL OR s.created_at < to_timestamp($8::float8 / 1000))`;

/**
 * One page of jobs past the job the cursor names (or from the start), newest or oldest first: one
 * statement, after ORDERED_READ_SETTINGS in the caller's transaction. The scan reads at most $4
 * jobs through the (state, seq) index: one range for a state filter; for none, one range per
 * state, which PostgreSQL merges in seq order (a Merge Append) and stops reading once enough have
 * come out. The other filters are applied to what the scan read, and the statement stops at $5
 * matches, so a common filter reads about a page of jobs and a rare one at most $4. Besides the
 * matches it returns the scan's last job (position $4) when the scan got that far, which is where
 * the next page starts if this one comes up short.
 *
 * The cursor job is looked up in the same statement; `found` is false when the cursor names no
 * job, and then the scan finds nothing past it. The rows come back in any order, with their positions.
 */
export function listJobsQuery(t: PostgresNaming) {
  const text = (scan: string, order: Order) => `
    SELECT c.found, p.position, p.matches, ${jobColumns('p')}
    FROM (
      SELECT $1::uuid IS NULL OR k.seq IS NOT NULL AS found,
        CASE WHEN $1::uuid IS NULL THEN ${ORDERS[order].start} ELSE k.seq END AS seq
      FROM (SELECT) one LEFT JOIN ${t.jobs} k ON k.id = $1::uuid
    ) c
    LEFT JOIN LATERAL (
      SELECT s.*, ${MATCHES} AS matches
      FROM (
        SELECT w.*, row_number() OVER (ORDER BY w.seq ${ORDERS[order].direction}) AS position
        FROM (${scan}) w
      ) s
      WHERE (${MATCHES}) OR s.position = $4
      ORDER BY s.seq ${ORDERS[order].direction} LIMIT $5
    ) p ON true`;
  const statements = (order: Order) => ({
    oneState: text(stateScan(t, '$9::text', order), order),
    allStates: text(
      `SELECT * FROM (${JOB_STATES.map((state) => stateScan(t, `'${state}'`, order)).join(' UNION ALL ')}) a ORDER BY a.seq ${ORDERS[order].direction} LIMIT $4`,
      order,
    ),
  });
  const byOrder = { newest: statements('newest'), oldest: statements('oldest') };
  type Row = PgJobRow & { found: boolean; position: string | null; matches: boolean | null };
  return async (db: PgExecutor, params: DriverListParams, scan = LIST_SCAN_LIMIT): Promise<{ rows: JobRow[]; next: string | null } | null> => {
    const values: unknown[] = [
      params.cursor ?? null,
      params.queue ?? null,
      params.name ?? null,
      scan,
      params.limit + 1,
      params.idPrefix ?? null,
      params.enqueuedAfter ?? null,
      params.enqueuedBefore ?? null,
    ];
    const { oneState, allStates } = byOrder[params.order];
    await db.query(ORDERED_READ_SETTINGS);
    const rows = await db.query<Row>(params.state === undefined ? allStates : oneState, params.state === undefined ? values : [...values, params.state]);
    if (!rows[0]!.found) return null;
    const scanned = rows
      .filter((row) => row.position !== null)
      .map((row) => ({ row, id: row.id, position: Number(row.position), matches: row.matches === true }))
      .sort((a, b) => a.position - b.position);
    const page = cutPage(scanned, params.limit, scan);
    return { rows: page.rows.map(fromPgRow), next: page.next };
  };
}
