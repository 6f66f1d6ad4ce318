import { isDeadLetterState, isTerminalState, JobNotFoundError, type Effect, type JobEvent, type LifecycleFields } from '../../core/index.js';
import { blocksSequence } from '../dependencies/dependency-plan.js';
import { sequenceWentOnError } from '../dependencies/sequence-chain.js';
import { historyLease, type JobRow } from '../job-row.js';
import type { HistoryEntry, OutcomeResult } from '../job-store.types.js';
import type { OperatorTransition } from '../checked/operator-transition.js';
import { inLine, type MemoryState } from './memory-tables.js';
import { guardReplayMemory } from './memory-unique.js';

/**
 * Applies the core lifecycle function to stored rows and carries out the effects it asks for:
 * wake hints, history entries, slot releases, halted schedules and the dependants' latches. Every
 * change of a job's lifecycle fields goes through here, so the probe sees each one in order.
 */
export class MemoryLifecycle {
  /** Parents whose edges are still to settle while a cascade is under way (see settleDependants). */
  private cascade: JobRow[] | null = null;

  constructor(private readonly state: MemoryState) {}

  /** Applies an event to a row the caller selected as eligible; a refusal there is a bug. */
  apply(row: JobRow, event: JobEvent, now: number): JobRow {
    const result = this.state.rules.transition(row, event, now);
    if (!result.ok) throw new Error(`BUG: ${event.kind} rejected for a job selected as eligible (${result.rejection}).`);
    return this.write(row, result.next, result.effects);
  }

  /**
   * A worker's report, applied only if the lifecycle accepts it from this reporter. Under the `lean`
   * finish a success that nothing needs is applied without its history entry, then deleted.
   */
  fenced(jobId: string, attempt: number, event: JobEvent, now: number): OutcomeResult {
    const row = this.state.tables.jobs.get(jobId);
    const result = row && this.state.rules.transition(row, event, now);
    if (!row || !result?.ok) return { jobId, attempt, status: 'stale' };
    if (event.kind === 'succeed' && this.state.finish === 'lean' && !this.neededAfterSuccess(row, result.next.output)) {
      this.write(row, result.next, result.effects.filter((effect) => effect.type !== 'history'));
      this.forget(row.id);
      return { jobId, attempt, status: 'applied', state: 'succeeded' };
    }
    return { jobId, attempt, status: 'applied', state: this.write(row, result.next, result.effects).state };
  }

  /**
   * Whether a job that succeeds with `output` must be kept under the lean finish: it has output (not
   * JSON null), holds a unique key or a throttle window, is in a sequence, has a dependant (any edge, settled or not), or an observer whose
   * filter matches its name hears `succeeded` or has yet to be fed one of its entries in a state it
   * hears (docs/stores.md#lean-finish; the SQL stores encode the same rules).
   */
  private neededAfterSuccess(row: JobRow, output: string | null): boolean {
    const { children, cursors, history } = this.state.tables;
    if ((output !== null && output !== 'null') || row.uniqueKey !== null || row.windowKind === 'throttle' || row.sequenceKey !== null || (children.get(row.id)?.length ?? 0) > 0) return true;
    for (const cursor of cursors.values()) {
      if (cursor.jobs !== null && !cursor.jobs.includes(row.name)) continue;
      const hears = cursor.states;
      if (hears === null || hears.includes('succeeded')) return true;
      if (history.some((entry) => entry.jobId === row.id && entry.id > cursor.lastId && hears.includes(entry.state))) return true;
    }
    return false;
  }

  /** Deletes a job with its history and its own edges to its parents, as retention would. */
  private forget(jobId: string): void {
    const { jobs, children, parents, history } = this.state.tables;
    jobs.delete(jobId);
    for (const parent of parents.get(jobId) ?? []) {
      const edges = children.get(parent);
      if (edges) children.set(parent, edges.filter((edge) => edge.childId !== jobId));
    }
    parents.delete(jobId);
    children.delete(jobId);
    const kept = history.filter((entry) => entry.jobId !== jobId);
    history.length = 0;
    history.push(...kept);
  }

  /** An operator event: the row before and after, and the verdict, for the caller to decide on. */
  operator(jobId: string, event: JobEvent): OperatorTransition {
    const before = this.require(jobId);
    const result = this.state.rules.transition(before, event, this.state.clock.now());
    const after = result.ok ? this.write(before, result.next, result.effects) : before;
    return { before, after, result };
  }

  /** Replays a job; the schedule it stopped, if any, mints again. */
  replayJob(jobId: string): OperatorTransition {
    const { jobs, schedules, children } = this.state.tables;
    guardReplayMemory(jobs.get(jobId), jobs.values());
    const row = jobs.get(jobId);
    if (row?.sequenceKey != null && isDeadLetterState(row.state) && (children.get(jobId) ?? []).some((edge) => edge.sequence !== undefined && edge.settled)) {
      throw sequenceWentOnError(row, row.sequenceKey);
    }
    const outcome = this.operator(jobId, { kind: 'replay' });
    const schedule = outcome.after.scheduleId === null ? undefined : schedules.get(outcome.after.scheduleId);
    if (outcome.result.ok && schedule?.state === 'dead_lettered' && schedule.haltedJobId === outcome.after.id) {
      schedules.set(schedule.id, { ...schedule, state: 'active', haltedJobId: null, updatedAt: this.state.clock.now() });
    }
    return outcome;
  }

  /** Stores the new lifecycle fields, then carries out the transition's effects in order. */
  write(row: JobRow, next: LifecycleFields, effects: readonly Effect[] = []): JobRow {
    const { tables, probe, hints } = this.state;
    const updated: JobRow = { ...row, ...next };
    tables.jobs.set(row.id, updated);
    probe.rowWritten?.(row, updated);
    for (const effect of effects) {
      switch (effect.type) {
        case 'wake':
          hints.emit(updated.queue);
          break;
        case 'halt_schedule':
          if (updated.scheduleId !== null) this.haltSchedule(updated.scheduleId, updated.id);
          break;
        case 'history':
          this.record(updated, effect.error, row);
          break;
        case 'settle_dependants':
          this.settleDependants(updated);
          break;
        case 'release_slots':
          if (tables.slotHolders.delete(updated.id)) probe.slotReleased?.(updated.id);
          break;
      }
    }
    return updated;
  }

  /** Appends a history entry, as the policy allows: of an insert, or of a change from `before`. */
  record(row: JobRow, error: string | null, before?: JobRow): void {
    const { tables, historyPolicy, clock, probe } = this.state;
    if (historyPolicy === 'off') return;
    const id = tables.nextHistoryId++;
    const lease = historyLease(before, row);
    const entry: HistoryEntry = {
      id,
      position: String(id),
      jobId: row.id,
      name: row.name,
      // A change of a lease is stamped with the instant its fence judged (the row's write time), so
      // a clock that ticks between the two never puts an outcome past its deadline.
      at: new Date(lease.workerId === null ? clock.now() : row.updatedAt),
      state: row.state,
      attempt: row.attempt,
      error: historyPolicy === 'transitions_and_errors' ? error : null,
      workerId: lease.workerId,
      leaseUntil: lease.leaseUntil === null ? null : new Date(lease.leaseUntil),
    };
    tables.history.push(entry);
    probe.historyAppended?.(entry);
  }

  /**
   * A parent finished: settle each of its open edges once. A qualifying end lowers the child's
   * latch (releasing it at zero); a failure cancels an `on_success` child, whose own end settles
   * its dependants in turn. That turn is queued, not recursed into: a cascade is as deep as the
   * graph, and a chain of thousands must not exhaust the call stack.
   */
  private settleDependants(parent: JobRow): void {
    if (this.cascade) {
      this.cascade.push(parent);
      return;
    }
    const queue = [parent];
    this.cascade = queue;
    try {
      for (let i = 0; i < queue.length; i++) this.settleEdgesOf(queue[i]!);
    } finally {
      this.cascade = null;
    }
  }

  private settleEdgesOf(parent: JobRow): void {
    const { tables, probe, clock } = this.state;
    const now = clock.now();
    const inLine = this.inLine(parent.id);
    for (const edge of tables.children.get(parent.id) ?? []) {
      if (edge.settled) continue;
      // A sequence's next job waits while the parent is still in line, and while its failure holds
      // the sequence (until the parent is replayed and ends again, or is discarded).
      if (edge.sequence !== undefined && (inLine || blocksSequence(edge.sequence, parent.state))) continue;
      edge.settled = true;
      probe.edgeSettled?.(parent.id, edge.childId);
      const child = tables.jobs.get(edge.childId);
      if (!child) continue;
      if (child.state !== 'awaiting_parents') {
        // A job that ended in line (cancelled before its turn) passes its turn on to the next.
        if (edge.sequence !== undefined && isTerminalState(child.state)) this.settleDependants(child);
        continue;
      }
      if (parent.state === 'succeeded' || edge.sequence !== undefined || child.dependencyMode === 'on_any_terminal' || child.dependencyMode === 'on_failure') {
        const pendingParents = child.pendingParents - 1;
        // An on_failure job remembers a parent that did not succeed: only that releases it at the end.
        const parentFailed = child.parentFailed || (child.dependencyMode === 'on_failure' && edge.sequence === undefined && parent.state !== 'succeeded');
        const lowered = { ...child, pendingParents, parentFailed };
        tables.jobs.set(child.id, lowered);
        probe.rowWritten?.(child, lowered);
        if (pendingParents <= 0) this.apply(lowered, child.dependencyMode === 'on_failure' && !parentFailed ? { kind: 'parents_succeeded' } : { kind: 'release' }, now);
      } else {
        this.apply(child, { kind: 'cascade_cancel', parentId: parent.id, parentState: parent.state }, now);
      }
    }
  }

  /** See {@link inLine}. */
  inLine(jobId: string): boolean {
    return inLine(this.state.tables, jobId);
  }

  private haltSchedule(scheduleId: string, jobId: string): void {
    const { schedules } = this.state.tables;
    const schedule = schedules.get(scheduleId);
    if (schedule && schedule.state !== 'dead_lettered') {
      schedules.set(scheduleId, { ...schedule, state: 'dead_lettered', haltedJobId: jobId, updatedAt: this.state.clock.now() });
    }
  }

  private require(jobId: string): JobRow {
    const row = this.state.tables.jobs.get(jobId);
    if (!row) throw new JobNotFoundError(jobId);
    return row;
  }
}
