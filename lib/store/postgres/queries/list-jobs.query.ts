import { JOB_STATES } from '../../../core/index.js';
import type { JobRow } from '../../job-row.js';
import { cutPage, LIST_SCAN_LIMIT, type DriverListParams } from '../../job-page.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { fromPgRow, jobColumns, type PgJobRow } from '../postgres-row.js';

/** The newest jobs of one state older than the cursor, read backwards through the (state, seq) index. */
function stateScan(t: PostgresNaming, state: string): string {
  return `(SELECT j.* FROM ${t.jobs} j WHERE j.state = ${state} AND j.seq < c.seq ORDER BY j.seq DESC LIMIT $4)`;
}

/**
 * The planner's choices the page statement is not allowed, for its transaction only. With its
 * scan limit of 10,000 as a constant, PostgreSQL plans a state it believes small (fewer rows than
 * that) as a bitmap scan of the whole state and a sort; with statistics taken before a burst, that
 * state may by now hold millions of rows. Ruled out, the only plan left is the ordered index scan
 * that stops where the page does, whatever the statistics say. JIT is off as for the claim.
 */
const PLAN_SETTINGS = `SELECT set_config('enable_bitmapscan', 'off', true), set_config('enable_seqscan', 'off', true),
  set_config('enable_sort', 'off', true), set_config('jit', 'off', true)`;

/**
 * One page of jobs, newest first, older than the job `before` names (or from the newest): one
 * statement, after PLAN_SETTINGS in the caller's transaction. The scan reads at most $4 jobs
 * through the (state, seq) index: one backward range for a state filter; for none, one range per
 * state, which PostgreSQL merges in seq order (a Merge Append) and stops reading once enough have
 * come out. Queue and name are filtered on what the scan read, and the statement stops at $5
 * matches, so a common filter reads about a page of jobs and a rare one at most $4. Besides the
 * matches it returns the scan's last job (position $4) when the scan got that far, which is where
 * the next page starts if this one comes up short.
 *
 * The cursor job is looked up in the same statement; `found` is false when `before` names no job,
 * and then the scan finds nothing below it. The rows come back in any order, with their positions.
 */
export function listJobsQuery(t: PostgresNaming) {
  const text = (scan: string) => `
    SELECT c.found, p.position, p.matches, ${jobColumns('p')}
    FROM (
      SELECT $1::uuid IS NULL OR k.seq IS NOT NULL AS found,
        CASE WHEN $1::uuid IS NULL THEN 9223372036854775807 ELSE k.seq END AS seq
      FROM (SELECT) one LEFT JOIN ${t.jobs} k ON k.id = $1::uuid
    ) c
    LEFT JOIN LATERAL (
      SELECT s.*, ($2::text IS NULL OR s.queue = $2) AND ($3::text IS NULL OR s.name = $3) AS matches
      FROM (
        SELECT w.*, row_number() OVER (ORDER BY w.seq DESC) AS position
        FROM (${scan}) w
      ) s
      WHERE (($2::text IS NULL OR s.queue = $2) AND ($3::text IS NULL OR s.name = $3)) OR s.position = $4
      ORDER BY s.seq DESC LIMIT $5
    ) p ON true`;
  const oneState = text(stateScan(t, '$6::text'));
  const allStates = text(`SELECT * FROM (${JOB_STATES.map((state) => stateScan(t, `'${state}'`)).join(' UNION ALL ')}) a ORDER BY a.seq DESC LIMIT $4`);
  type Row = PgJobRow & { found: boolean; position: string | null; matches: boolean | null };
  return async (db: PgExecutor, params: DriverListParams, scan = LIST_SCAN_LIMIT): Promise<{ rows: JobRow[]; next: string | null } | null> => {
    const values: unknown[] = [params.before ?? null, params.queue ?? null, params.name ?? null, scan, params.limit + 1];
    await db.query(PLAN_SETTINGS);
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
