import { isDeadLetterState, isTerminalState, LIFECYCLE_RULES, type Effect, type HistoryPolicy, type JobEvent, type JobState } from '../../core/index.js';
import { historyLease, type JobRow } from '../job-row.js';
import type { MysqlExecutor, MysqlStatement } from './mysql-executor.js';
import type { MysqlNaming } from './mysql-naming.js';
import { fromMysqlRow, instantParam, JOB_COLUMNS, type MysqlJobRow } from './mysql-row.js';
import { parentGuard } from './mysql-locks.js';

/** Edges one write settles at most; the sweep (jobSettleDependencies) settles the rest. */
export const SETTLE_EDGES_PER_WRITE = 1_000;

/**
 * Edges a write may settle on top of {@link SETTLE_EDGES_PER_WRITE} for each job it ended: a job of
 * a batch has an edge to each of its batch's (up to three) callbacks, so an outcome write of any
 * number of batch jobs settles them all itself, and the write that ends a batch releases its callbacks.
 */
export const SETTLE_EDGES_PER_ENDED_JOB = 3;

/** A job as a write locked it, and whether it has dependants still waiting on it. */
export interface LockedJob {
  readonly row: JobRow;
  readonly openEdges: boolean;
  /** Read from a lane of held-back jobs (its `parked_key` is set). */
  readonly parked?: boolean;
}

/** `SELECT` list of a locking read: the job's columns and whether it has open edges. */
export const LOCKED_JOB_COLUMNS = (naming: MysqlNaming) =>
  `${JOB_COLUMNS}, EXISTS (SELECT 1 FROM ${naming.dependencies} d WHERE d.parent_id = j.id AND d.settled = FALSE) AS open_edges`;

export type LockedJobRow = MysqlJobRow & { open_edges: number };

/**
 * True of an open edge `e` whose parent is still in line in its sequence: it ended without running
 * while its own sequence edge is open. A sequence edge from it waits for its turn (docs/sequences.md).
 */
export const PARENT_IN_LINE = (naming: MysqlNaming, e: string) =>
  `EXISTS (SELECT 1 FROM ${naming.dependencies} i WHERE i.child_id = ${e}.parent_id AND i.sequence IS NOT NULL AND i.settled = FALSE)`;

export function toLockedJob(row: LockedJobRow): LockedJob {
  return { row: fromMysqlRow(row), openEdges: Number(row.open_edges) === 1 };
}

interface HistoryRow {
  readonly jobId: string;
  readonly name: string;
  readonly state: JobState;
  readonly attempt: number;
  readonly error: string | null;
  readonly workerId: string | null;
  readonly leaseUntil: number | null;
}

/**
 * The effects of one write, carried out in its transaction. MySQL's triggers cannot change the
 * table that fired them (error 1442), and a dependant's release is a change to `jobs`, so the
 * adapter applies every effect itself: the driver locks the rows it changes, runs the core
 * lifecycle on them (lib/core/lifecycle.ts, as the in-memory store does), and stages here each
 * new row and what the transition asks for: a history entry (as the policy allows), the change
 * in the job counts, the schedule a dead letter halts, the dependants a finished job settles, and
 * the queues to wake. Staged statements go out together,
 * with the COMMIT when the caller can send it (mysql-transaction.ts), so most writes cost two
 * round trips: the locking read, and the rest.
 */
export class EffectWriter {
  /** Each changed job's row as this write first read it and as it leaves it, by seq. */
  private readonly rows = new Map<number, { readonly before: JobRow; after: JobRow }>();
  private readonly history: HistoryRow[] = [];
  private readonly deltas = new Map<string, number>();
  private readonly halts: MysqlStatement[] = [];
  private readonly extra: MysqlStatement[] = [];
  private settleFrom: JobRow[] = [];
  /** Queues with jobs that became due: hinted once the write commits. */
  readonly woken = new Set<string>();

  constructor(
    private readonly naming: MysqlNaming,
    private readonly policy: HistoryPolicy,
    readonly now: number,
  ) {}

  /** Applies `event` to a locked job, staging the change; false when the lifecycle refuses it. */
  apply(job: LockedJob, event: JobEvent): JobRow | null {
    const result = LIFECYCLE_RULES.transition(job.row, event, this.now);
    if (!result.ok) return null;
    const after: JobRow = { ...job.row, ...result.next };
    this.change(job, after, result.effects);
    return after;
  }

  /** A heartbeat: the renewed lease, with the progress it carries (written only when the fence lets it renew). */
  renew(job: LockedJob, event: JobEvent & { readonly kind: 'heartbeat' }, progress: string | undefined): JobRow | null {
    const result = LIFECYCLE_RULES.transition(job.row, event, this.now);
    if (!result.ok) return null;
    const after: JobRow = { ...job.row, ...result.next, progress: progress ?? job.row.progress };
    this.change(job, after, result.effects);
    return after;
  }

  /**
   * A success under the lean finish that nothing needs (lean-finish.query.ts decided): the job goes
   * with its history and its own edges to its parents, as retention would delete it, and no entry
   * is written for the success.
   */
  applyLean(job: LockedJob, event: JobEvent): JobRow | null {
    const result = LIFECYCLE_RULES.transition(job.row, event, this.now);
    if (!result.ok) return null;
    const after: JobRow = { ...job.row, ...result.next };
    this.count(after.queue, job.row.state, -1);
    const t = this.naming;
    this.extra.push(
      { sql: `DELETE FROM ${t.history} WHERE job_id = ?`, values: [after.id] },
      { sql: `DELETE FROM ${t.dependencies} WHERE child_id = ?`, values: [after.id] },
      { sql: `DELETE FROM ${t.jobs} WHERE seq = ?`, values: [after.seq] },
    );
    return after;
  }

  /** Stages a row's new fields and the effects its transition asked for. */
  change(job: LockedJob, after: JobRow, effects: readonly Effect[], options: { readonly history?: boolean } = {}): void {
    const before = job.row;
    const staged = this.rows.get(after.seq);
    if (staged) staged.after = after;
    else this.rows.set(after.seq, { before, after });
    if (before.state !== after.state) {
      this.count(after.queue, before.state, -1);
      this.count(after.queue, after.state, 1);
    }
    for (const effect of effects) {
      switch (effect.type) {
        case 'wake':
          this.woken.add(after.queue);
          break;
        case 'history':
          if (options.history !== false) this.record(after, effect.error, before);
          break;
        case 'release_slots':
          // Nothing to give back: a limited claim counts the jobs that run (mysql-limits.ts).
          break;
        case 'halt_schedule':
          if (after.scheduleId !== null) {
            this.halts.push({
              sql: `UPDATE ${this.naming.schedules} SET state = 'dead_lettered', halted_job_id = ?, updated_at = ? WHERE id = ? AND state <> 'dead_lettered'`,
              values: [after.id, instantParam(this.now), after.scheduleId],
            });
          }
          break;
        case 'settle_dependants':
          if (job.openEdges) this.settleFrom.push(after);
          break;
      }
    }
  }

  /**
   * Stages a history entry, as the policy allows: for a job written outside a transition (an
   * insert), or for a change from `before`, naming the lease it gave or ended (historyLease).
   */
  record(row: JobRow, error: string | null, before?: JobRow): void {
    if (this.policy === 'off') return;
    const lease = historyLease(before, row);
    this.history.push({ jobId: row.id, name: row.name, state: row.state, attempt: row.attempt, error: this.policy === 'transitions_and_errors' ? error : null, ...lease });
  }

  /** Stages a change to the job counts. */
  count(queue: string, state: JobState, delta: number): void {
    const key = `${queue}\u0000${state}`;
    this.deltas.set(key, (this.deltas.get(key) ?? 0) + delta);
  }

  /** Stages a statement to run with the rest. */
  also(statement: MysqlStatement): void {
    this.extra.push(statement);
  }

  /**
   * Settles the open edges of the jobs this write finished, and of the dependants that settling
   * cancels in turn, up to {@link SETTLE_EDGES_PER_WRITE} edges and {@link SETTLE_EDGES_PER_ENDED_JOB}
   * more per job the write ended; the sweep settles what is left.
   * Each round locks the edges and their dependants (in id order, as every write locks jobs),
   * lowers each dependant's latch or cancels it, and stages those changes like any other.
   */
  async settle(db: MysqlExecutor): Promise<number> {
    let settled = 0;
    const budget = SETTLE_EDGES_PER_WRITE + SETTLE_EDGES_PER_ENDED_JOB * this.settleFrom.length;
    while (this.settleFrom.length > 0 && settled < budget) {
      const parents = new Map(this.settleFrom.map((parent) => [parent.id, parent]));
      this.settleFrom = [];
      // The staged rows first (the edges' parents must read as finished to anyone after this
      // write), and the parents' guards, so the edges read next include every committed one.
      await db.script([...this.take(), ...parentGuard(this.naming, [...parents.keys()], 'exclusive')]);
      settled += await this.settleRound(db, parents, budget - settled);
    }
    return settled;
  }

  /**
   * Settles open edges of `parents` (finished, read or staged by this write), at most `budget`. A
   * sequence edge stays open while its parent's failure holds the sequence (`block`, until the
   * parent is replayed and ends again, or is discarded) and while the parent is still in line; once
   * settled it releases its child however the parent ended, and a child that ended in line passes
   * its turn on. An `on_failure` child's edge lowers its latch however the parent ended, and one
   * that did not succeed sets the child's `parent_failed`; at 0 the child is released when that is
   * set, else cancelled (ALL_PARENTS_SUCCEEDED) and its own dependants settled, as a cascade's are.
   * Each edge reads and writes only its child's row, never the child's other edges.
   */
  async settleRound(db: MysqlExecutor, parents: ReadonlyMap<string, { readonly id: string; readonly state: JobState }>, budget: number): Promise<number> {
    const failed = [...parents.values()].filter((parent) => isDeadLetterState(parent.state)).map((parent) => parent.id);
    const rows = await db.query<LockedJobRow & { edge_parent: string; edge_sequence: 'block' | 'continue' | null }>(
      `SELECT e.parent_id AS edge_parent, e.sequence AS edge_sequence, ${LOCKED_JOB_COLUMNS(this.naming)}
       FROM ${this.naming.dependencies} e JOIN ${this.naming.jobs} j ON j.id = e.child_id
       WHERE e.parent_id IN (?) AND e.settled = FALSE
         AND (e.sequence IS NULL OR (NOT ${PARENT_IN_LINE(this.naming, 'e')}${failed.length > 0 ? ` AND NOT (e.sequence = 'block' AND e.parent_id IN (?))` : ''}))
       ORDER BY j.id, e.parent_id LIMIT ? FOR UPDATE`,
      [[...parents.keys()], ...(failed.length > 0 ? [failed] : []), budget],
    );
    if (rows.length === 0) return 0;
    this.extra.push({
      sql: `UPDATE ${this.naming.dependencies} SET settled = TRUE WHERE (child_id, parent_id) IN (${rows.map(() => '(?, ?)').join(', ')})`,
      values: rows.flatMap((r) => [r.id, r.edge_parent]),
    });
    const originals = new Map(rows.map((r) => [r.id, toLockedJob(r)]));
    const children = new Map<string, LockedJob>();
    for (const r of rows) {
      const parent = parents.get(r.edge_parent)!;
      const child = children.get(r.id) ?? originals.get(r.id)!;
      if (child.row.state !== 'awaiting_parents') {
        // A job that ended in line (cancelled before its turn) passes its turn on to the next.
        if (r.edge_sequence !== null && isTerminalState(child.row.state)) this.settleFrom.push(child.row);
        continue;
      }
      const mode = child.row.dependencyMode;
      if (parent.state === 'succeeded' || r.edge_sequence !== null || mode === 'on_any_terminal' || mode === 'on_failure') {
        // An on_failure job remembers, on its own row, a parent that did not succeed: what releases
        // it when its latch reaches 0, so that settle reads none of its other edges.
        const parentFailed = child.row.parentFailed || (mode === 'on_failure' && r.edge_sequence === null && parent.state !== 'succeeded');
        const lowered: LockedJob = { ...child, row: { ...child.row, pendingParents: child.row.pendingParents - 1, parentFailed } };
        children.set(r.id, lowered);
      } else {
        const cancel = LIFECYCLE_RULES.transition(child.row, { kind: 'cascade_cancel', parentId: parent.id, parentState: parent.state }, this.now);
        if (!cancel.ok) continue;
        const cancelled: JobRow = { ...child.row, ...cancel.next };
        // Staged from the row as read, so a latch lowered by an earlier edge of this round is written too.
        const original = originals.get(r.id)!;
        this.change(original, cancelled, cancel.effects);
        // Its open edges were read before its guard was held: the next round reads them under it.
        if (!original.openEdges) this.settleFrom.push(cancelled);
        children.set(r.id, { ...child, row: cancelled });
      }
    }
    for (const child of children.values()) {
      const original = originals.get(child.row.id)!;
      if (child.row.state !== 'awaiting_parents' || child.row.pendingParents === original.row.pendingParents) continue;
      // A lowered latch: at zero the job is released, else only the count (and an on_failure job's
      // parent_failed) changes. Either way the change is staged from the row as read, so its
      // lowered count is written.
      if (child.row.pendingParents > 0) {
        this.change(original, child.row, []);
        continue;
      }
      // An on_failure job whose parents all succeeded is cancelled instead, as a cascade cancels.
      const allSucceeded = child.row.dependencyMode === 'on_failure' && !child.row.parentFailed;
      const ended = LIFECYCLE_RULES.transition(child.row, allSucceeded ? { kind: 'parents_succeeded' } : { kind: 'release' }, this.now);
      if (!ended.ok) continue;
      const after: JobRow = { ...child.row, ...ended.next };
      this.change(original, after, ended.effects);
      // Its open edges were read before its guard was held: the next round reads them under it.
      if (allSucceeded && !original.openEdges) this.settleFrom.push(after);
    }
    return rows.length;
  }

  /** Sends what is staged so far, keeping the transaction open. */
  async flush(db: MysqlExecutor): Promise<void> {
    const statements = this.take();
    if (statements.length > 0) await db.script(statements);
  }

  /**
   * The staged rows as UPDATEs: each row's columns that changed, rows that change the same columns
   * to the same values in one statement (a claim's fresh jobs, a batch of plain successes), so a
   * write of 200 jobs is a statement or two rather than 200.
   */
  private rowUpdates(): MysqlStatement[] {
    const groups = new Map<string, { set: [string, unknown][]; seqs: number[] }>();
    for (const { before, after } of this.rows.values()) {
      const set = changedColumns(before, after);
      if (set.length === 0) continue;
      const key = JSON.stringify(set);
      const group = groups.get(key);
      if (group) group.seqs.push(after.seq);
      else groups.set(key, { set, seqs: [after.seq] });
    }
    this.rows.clear();
    return [...groups.values()].map(({ set, seqs }) => ({
      sql: `UPDATE ${this.naming.jobs} SET ${set.map(([column]) => (column === 'parked_key' ? 'parked_key = NULL' : `${column} = ?`)).join(', ')} WHERE seq IN (?)`,
      values: [...set.filter(([column]) => column !== 'parked_key').map(([, value]) => value), seqs],
    }));
  }

  /** What is staged, in the order it must run, emptied. */
  take(): MysqlStatement[] {
    const t = this.naming;
    const statements = this.rowUpdates();
    statements.push(...this.extra.splice(0));
    if (this.history.length > 0) {
      const entries = this.history.splice(0);
      const at = instantParam(this.now);
      statements.push({
        sql: `INSERT INTO ${t.history} (job_id, name, at, state, attempt, error, worker_id, lease_until) VALUES ${entries.map(() => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
        values: entries.flatMap((e) => [e.jobId, e.name, at, e.state, e.attempt, e.error, e.workerId, instantParam(e.leaseUntil)]),
      });
    }
    const deltas = [...this.deltas].filter(([, delta]) => delta !== 0);
    this.deltas.clear();
    if (deltas.length > 0) {
      statements.push({
        sql: `INSERT INTO ${t.countDeltas} (queue, state, delta) VALUES ${deltas.map(() => '(?, ?, ?)').join(', ')}`,
        values: deltas.flatMap(([key, delta]) => [...key.split('\u0000'), delta]),
      });
    }
    statements.push(...this.halts.splice(0));
    return statements;
  }
}

/** The lifecycle columns and how each is written, from a JobRow. */
const COLUMNS: readonly [keyof JobRow, string, (row: JobRow) => unknown][] = [
  ['state', 'state', (r) => r.state],
  ['runAt', 'run_at', (r) => instantParam(r.runAt)],
  ['attempt', 'attempt', (r) => r.attempt],
  ['maxAttempts', 'max_attempts', (r) => r.maxAttempts],
  ['snoozes', 'snoozes', (r) => r.snoozes],
  ['workerId', 'worker_id', (r) => r.workerId],
  ['leasedUntil', 'leased_until', (r) => instantParam(r.leasedUntil)],
  ['cancelRequested', 'cancel_requested', (r) => r.cancelRequested],
  ['lastError', 'last_error', (r) => r.lastError],
  ['output', 'output', (r) => r.output],
  ['finishedAt', 'finished_at', (r) => instantParam(r.finishedAt)],
  ['updatedAt', 'updated_at', (r) => instantParam(r.updatedAt)],
  ['pendingParents', 'pending_parents', (r) => r.pendingParents],
  ['parentFailed', 'parent_failed', (r) => r.parentFailed],
  ['progress', 'progress', (r) => r.progress],
];

/**
 * The columns a change writes, with their values; a job that leaves `scheduled` also leaves the
 * lane it was parked in (`parked_key`, queries/claim-limited.query.ts).
 */
function changedColumns(before: JobRow, after: JobRow): [string, unknown][] {
  const set: [string, unknown][] = [];
  for (const [field, column, value] of COLUMNS) if (before[field] !== after[field]) set.push([column, value(after)]);
  if (before.state === 'scheduled' && after.state !== 'scheduled') set.push(['parked_key', null]);
  return set;
}
