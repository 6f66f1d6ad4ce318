import { LIFECYCLE_RULES, type Effect, type HistoryPolicy, type JobEvent, type JobState } from '../../core/index.js';
import type { JobRow } from '../job-row.js';
import type { MysqlExecutor, MysqlStatement } from './mysql-executor.js';
import type { MysqlNaming } from './mysql-naming.js';
import { fromMysqlRow, instantParam, JOB_COLUMNS, type MysqlJobRow } from './mysql-row.js';

/** Edges one write settles at most; the sweep (jobSettleDependencies) settles the rest. */
export const SETTLE_EDGES_PER_WRITE = 1_000;

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

export function toLockedJob(row: LockedJobRow): LockedJob {
  return { row: fromMysqlRow(row), openEdges: Number(row.open_edges) === 1 };
}

interface HistoryRow {
  readonly jobId: string;
  readonly name: string;
  readonly state: JobState;
  readonly attempt: number;
  readonly error: string | null;
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
  private readonly rows: MysqlStatement[] = [];
  private readonly history: HistoryRow[] = [];
  private readonly deltas = new Map<string, number>();
  private readonly halts: MysqlStatement[] = [];
  private readonly extra: MysqlStatement[] = [];
  private settleFrom: JobRow[] = [];
  /** Queues with jobs that became due: hinted once the write commits. */
  readonly woken = new Set<string>();
  /** Jobs that became terminal in this write. */
  readonly finished: JobRow[] = [];

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
    this.finished.push(after);
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
    this.rows.push({
      sql: `UPDATE ${this.naming.jobs} SET state = ?, run_at = ?, attempt = ?, worker_id = ?, leased_until = ?, cancel_requested = ?,
              last_error = ?, output = ?, finished_at = ?, updated_at = ?, pending_parents = ?, progress = ?,
              parked_key = IF(state = 'scheduled', parked_key, NULL) WHERE seq = ?`,
      values: [
        after.state,
        instantParam(after.runAt),
        after.attempt,
        after.workerId,
        instantParam(after.leasedUntil),
        after.cancelRequested,
        after.lastError,
        after.output,
        instantParam(after.finishedAt),
        instantParam(after.updatedAt),
        after.pendingParents,
        after.progress,
        after.seq,
      ],
    });
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
          if (options.history !== false) this.record(after, effect.error);
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
          this.finished.push(after);
          if (job.openEdges) this.settleFrom.push(after);
          break;
      }
    }
  }

  /** Stages a history entry for a job written outside a transition (an insert), as the policy allows. */
  record(row: JobRow, error: string | null): void {
    if (this.policy === 'off') return;
    this.history.push({ jobId: row.id, name: row.name, state: row.state, attempt: row.attempt, error: this.policy === 'transitions_and_errors' ? error : null });
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
   * cancels in turn, up to {@link SETTLE_EDGES_PER_WRITE} edges; the sweep settles what is left.
   * Each round locks the edges and their dependants (in id order, as every write locks jobs),
   * lowers each dependant's latch or cancels it, and stages those changes like any other.
   */
  async settle(db: MysqlExecutor): Promise<number> {
    let settled = 0;
    while (this.settleFrom.length > 0 && settled < SETTLE_EDGES_PER_WRITE) {
      const parents = new Map(this.settleFrom.map((parent) => [parent.id, parent]));
      this.settleFrom = [];
      // The staged rows first: the edges' parents must read as finished to anyone after this write.
      await this.flush(db);
      settled += await this.settleRound(db, parents, SETTLE_EDGES_PER_WRITE - settled);
    }
    return settled;
  }

  /** Settles open edges of `parents` (finished, read or staged by this write), at most `budget`. */
  async settleRound(db: MysqlExecutor, parents: ReadonlyMap<string, { readonly id: string; readonly state: JobState }>, budget: number): Promise<number> {
    const rows = await db.query<LockedJobRow & { edge_parent: string }>(
      `SELECT e.parent_id AS edge_parent, ${LOCKED_JOB_COLUMNS(this.naming)}
       FROM ${this.naming.dependencies} e JOIN ${this.naming.jobs} j ON j.id = e.child_id
       WHERE e.parent_id IN (?) AND e.settled = FALSE
       ORDER BY j.id, e.parent_id LIMIT ? FOR UPDATE`,
      [[...parents.keys()], budget],
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
      if (child.row.state !== 'awaiting_parents') continue;
      if (parent.state === 'succeeded' || child.row.dependencyMode === 'on_any_terminal') {
        const lowered: LockedJob = { ...child, row: { ...child.row, pendingParents: child.row.pendingParents - 1 } };
        children.set(r.id, lowered);
      } else {
        const cancelled = this.apply(child, { kind: 'cascade_cancel', parentId: parent.id, parentState: parent.state });
        if (cancelled) children.set(r.id, { ...child, row: cancelled });
      }
    }
    for (const child of children.values()) {
      const original = originals.get(child.row.id)!;
      if (child.row.state !== 'awaiting_parents' || child.row.pendingParents === original.row.pendingParents) continue;
      // A lowered latch: at zero the job is released, else only the count changes.
      if (child.row.pendingParents <= 0) this.apply(child, { kind: 'release' });
      else this.change(original, child.row, []);
    }
    return rows.length;
  }

  /** Sends what is staged so far, keeping the transaction open. */
  async flush(db: MysqlExecutor): Promise<void> {
    const statements = this.take();
    if (statements.length > 0) await db.script(statements);
  }

  /** What is staged, in the order it must run, emptied. */
  take(): MysqlStatement[] {
    const t = this.naming;
    const statements = this.rows.splice(0);
    statements.push(...this.extra.splice(0));
    if (this.history.length > 0) {
      const entries = this.history.splice(0);
      const at = instantParam(this.now);
      statements.push({
        sql: `INSERT INTO ${t.history} (job_id, name, at, state, attempt, error) VALUES ${entries.map(() => '(?, ?, ?, ?, ?, ?)').join(', ')}`,
        values: entries.flatMap((e) => [e.jobId, e.name, at, e.state, e.attempt, e.error]),
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
