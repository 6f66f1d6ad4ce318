import type { CheckedClaimParams } from '../../checked/store-params.js';
import { claimOrder, type JobRow } from '../../job-row.js';
import { limitsGate } from '../mysql-limits.js';
import type { LockedJob } from '../mysql-effects.js';
import type { MysqlStatement } from '../mysql-executor.js';
import { fromMysqlInstant } from '../mysql-instant.js';
import type { MysqlNaming } from '../mysql-naming.js';
import { fromMysqlRow, instantParam, JOB_COLUMNS, type MysqlJobRow } from '../mysql-row.js';
import type { MysqlTransaction } from '../mysql-transaction.js';

/** What a claim's locking reads found: the database's clock, and the jobs they locked, in claim order. */
export interface ClaimCandidates {
  readonly now: number;
  /** The results of the statements sent ahead of the claim's reads. */
  readonly before: unknown[];
  readonly jobs: LockedJob[];
  /** Whether any limit exists (the claim must pick within them), and any declared one is not yet in effect. */
  readonly limited: boolean;
  readonly pending: boolean;
}

/**
 * Locks up to `limit` claim candidates in claim order (priority, run time, enqueue order) with
 * `FOR UPDATE SKIP LOCKED`: due scheduled jobs of the asked-for, unpaused queues, and (with
 * `includeLapsed`) running jobs whose lease lapsed with attempts left and no cancel request. Rows
 * another claimer holds are passed over, never waited for.
 *
 * The claim index (state, parked_key, priority, run_at, seq) is read one priority at a time, each
 * range bounded by `run_at <= now`, so future-dated jobs of an urgent priority are never walked on
 * the way to the due jobs of a later one (MariaDB 10.11 has no skip scan). The priority to read
 * comes from the lowest in use, found in the same query through a session variable, so a claim
 * that fills its batch from the first priority in use costs one round trip for its reads; each
 * priority it has to move past costs one more. The clock and the paused queues are read into
 * session variables too, so every statement of the claim judges by one instant. `ahead` goes first
 * in the same query (an outcome write's locking read, when a claim carries outcomes).
 */
export async function lockClaimCandidates(tx: MysqlTransaction, t: MysqlNaming, params: CheckedClaimParams, ahead: readonly MysqlStatement[] = []): Promise<ClaimCandidates> {
  const { limit, queues, includeLapsed } = params;
  const inQueues = `queue IN (?) AND FIND_IN_SET(queue, @paused) = 0`;
  // SELECT … INTO, never SET @v = (SELECT …): MariaDB runs the subquery of a SET as a locking read
  // (shared locks, at READ COMMITTED too), so a claim would wait on rows another writer holds.
  const first = `SELECT MIN(priority) INTO @p FROM ${t.jobs} WHERE state = 'scheduled' AND queue IN (?) AND parked_key IS NULL`;
  const next = `SELECT MIN(priority) INTO @p FROM ${t.jobs} WHERE state = 'scheduled' AND queue IN (?) AND parked_key IS NULL AND priority > @p`;
  const due = (wanted: number): MysqlStatement => ({
    sql: `SELECT ${JOB_COLUMNS} FROM ${t.jobs} j
          WHERE state = 'scheduled' AND parked_key IS NULL AND priority = @p AND run_at <= @now AND attempt < max_attempts AND ${inQueues}
          ORDER BY run_at, seq LIMIT ? FOR UPDATE SKIP LOCKED`,
    values: [queues, wanted],
  });
  const statements: MysqlStatement[] = [
    limitsGate(t),
    { sql: 'SET @now = UTC_TIMESTAMP(3)' },
    { sql: `SELECT COALESCE(GROUP_CONCAT(name), '') INTO @paused FROM ${t.queues} WHERE paused = TRUE` },
    { sql: first, values: [queues] },
    { sql: 'SELECT @now AS now, @p AS p' },
  ];
  if (includeLapsed) {
    statements.push({
      sql: `SELECT ${JOB_COLUMNS} FROM ${t.jobs} j
            WHERE state = 'running' AND leased_until <= @now AND attempt < max_attempts AND cancel_requested = FALSE AND ${inQueues}
            ORDER BY priority, run_at, seq LIMIT ? FOR UPDATE SKIP LOCKED`,
      values: [queues, limit],
    });
  }
  statements.push(due(limit));
  const all = await tx.script([...ahead, ...statements]);
  const before = all.slice(0, ahead.length);
  const results = all.slice(ahead.length);
  const [gate] = results[0] as { limited: number; pending: number }[];
  const [{ now: nowText, p }] = results[4] as { now: string; p: number | null }[];
  const now = fromMysqlInstant(nowText!).getTime();
  const lapsed = includeLapsed ? (results[5] as MysqlJobRow[]) : [];
  let dueRows = results.at(-1) as MysqlJobRow[];
  const found = [...lapsed, ...dueRows];
  let wanted = limit - dueRows.length;
  let priority = p;
  while (wanted > 0 && priority !== null) {
    // That priority has no more due jobs (or none this claimer may take): move to the next one in use.
    const [, position, rows] = await tx.script([{ sql: next, values: [queues] }, { sql: 'SELECT @p AS p' }, due(wanted)]);
    priority = (position as { p: number | null }[])[0]?.p ?? null;
    dueRows = rows as MysqlJobRow[];
    if (priority === null) break;
    found.push(...dueRows);
    wanted -= dueRows.length;
  }
  const jobs = found.map(fromMysqlRow).sort(claimOrder);
  const limited = Number(gate?.limited ?? 0) === 1;
  // Under limits every candidate locked counts: the pick may pass some over for the ones behind them.
  return { now, before, limited, pending: Number(gate?.pending ?? 0) === 1, jobs: (limited ? jobs : jobs.slice(0, limit)).map((row) => ({ row, openEdges: false })) };
}

/**
 * Locks up to `count` more due candidates after `last` in claim order, over every priority: a
 * limited claim walks on when limits held back the candidates it had. Rows it locked already are
 * behind `last`, so none comes twice.
 */
export async function lockMoreCandidates(tx: MysqlTransaction, t: MysqlNaming, params: CheckedClaimParams, last: JobRow, count: number): Promise<LockedJob[]> {
  const rows = await tx.query<MysqlJobRow>(
    `SELECT ${JOB_COLUMNS} FROM ${t.jobs} j
     WHERE state = 'scheduled' AND parked_key IS NULL AND run_at <= @now AND attempt < max_attempts
       AND queue IN (?) AND FIND_IN_SET(queue, @paused) = 0
       AND (priority > ? OR (priority = ? AND (run_at > ? OR (run_at = ? AND seq > ?))))
     ORDER BY priority, run_at, seq LIMIT ? FOR UPDATE SKIP LOCKED`,
    [params.queues, last.priority, last.priority, instantParam(last.runAt), instantParam(last.runAt), last.seq, count],
  );
  return rows.map((r) => ({ row: fromMysqlRow(r), openEdges: false }));
}
