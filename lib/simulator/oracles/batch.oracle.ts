import { isDeadLetterState, type BatchCallbackKind, type JobState } from '../../core/index.js';
import type { BatchCallbackIds, BatchSummary, EnqueueBatchResult, EnqueueResult } from '../../store/index.js';
import type { RowView, SimEvent } from '../sim-event.js';
import { Oracle, TERMINAL, type CallEvent, type RunEnd } from './oracle.js';

/** An enqueue as the gateway logs it: the oracle reads a dependant's parents and mode. */
interface LoggedInput {
  readonly id: string;
  readonly dependsOn: readonly string[];
  readonly dependencyMode: string;
}

/** A batch summary as the gateway logs it (store-gateway.ts): as JSON, so without its date. */
type LoggedSummary = Omit<BatchSummary, 'createdAt' | 'failedJobIds'>;

/** A job that waits for others and runs only on how they ended: a batch's callback, or a dependant in mode `on_failure`. */
interface Waiter {
  readonly id: string;
  /** `failure` for an `on_failure` dependant, which behaves as a batch's onFailure. */
  readonly kind: BatchCallbackKind;
  readonly parents: readonly string[];
  /** Null for a plain `on_failure` dependant. */
  readonly batchId: string | null;
  /**
   * The end of each parent that settled its edge: the state it was in when the waiter was written,
   * if it had ended by then, or else the first end it reached after.
   */
  readonly ends: Map<string, JobState>;
  claimed: boolean;
  /** An operator cancelled it (alone, or with its batch): it need not run, and the store did not decide. */
  operatorCancelled: boolean;
  /** Already counted once: the end of the run does not count it again. */
  flagged: boolean;
}

/** What a waiter's parents call for, as far as they have gone: wait, run, or be cancelled unrun. */
export type WaiterDue = 'waits' | 'runs' | 'skipped';

const CALLBACK_KEYS: readonly (readonly [keyof BatchCallbackIds, BatchCallbackKind])[] = [
  ['onSuccess', 'success'],
  ['onComplete', 'complete'],
  ['onFailure', 'failure'],
];
const LABEL: Record<BatchCallbackKind, string> = { success: 'onSuccess', complete: 'onComplete', failure: 'onFailure' };
const OPEN = new Set<JobState>(['scheduled', 'awaiting_parents', 'running']);

/**
 * Batch callbacks, and dependants in mode `on_failure`, run exactly when their jobs' ends call for
 * it (`jobEnqueueBatch`), judged from the enqueues' answers (a batch's job and
 * callback ids) and arguments (a plain dependant's parents and mode), and the rows as stored. A
 * parent's end that counts is the one that settled its edge, once: its state when the waiter was
 * written if it had ended by then, or else the first end it reached after (a replay brings a job
 * back, but its callbacks do not run again):
 *
 * - no callback and no `on_failure` dependant is claimed before every job of its batch (every
 *   parent) has ended;
 * - onSuccess is never claimed unless every job succeeded; onFailure, and an `on_failure`
 *   dependant, never unless at least one did not;
 * - the store cancels onComplete never, onFailure (and an `on_failure` dependant) only once every
 *   job ended and all succeeded, onSuccess only once a job ended without succeeding; only an
 *   operator may cancel them otherwise (`jobCancel` naming it, or `jobCancelBatch` naming its batch);
 * - at the end of the run, no callback or dependant whose parents have all ended still waits, none
 *   whose parents' ends rule it out is left due, and, in a run that drained, every one whose
 *   parents' ends call for it has run (been claimed), unless an operator cancelled it;
 * - every batch summary the operator reads (`jobListBatches`, `jobBatch`) counts the batch's jobs
 *   and its callbacks' states as they stand.
 *
 * Callbacks and `on_failure` dependants that ran, that the store cancelled unrun as their case did
 * not come, and batches an operator cancelled are counted as coverage.
 */
export class BatchOracle extends Oracle {
  readonly name = 'batch_callbacks';
  /** Batch callbacks claimed for the first time, and those the store cancelled unrun, rightly. */
  callbacksRun = 0;
  callbacksSkipped = 0;
  /** The same for plain `on_failure` dependants. */
  watchersRun = 0;
  watchersSkipped = 0;
  /** `jobCancelBatch` calls that cancelled or asked to stop at least one job. */
  batchCancels = 0;
  private readonly waiters = new Map<string, Waiter>();
  private readonly batches = new Map<string, { readonly jobs: readonly string[]; readonly callbacks: readonly Waiter[] }>();
  /** The waiters of each job. */
  private readonly dependants = new Map<string, Waiter[]>();
  private readonly rows = new Map<string, RowView>();
  /** Cancels of waiters written in the call in progress, judged once its caller is known. */
  private cancels: { readonly waiter: Waiter; readonly why: string | null }[] = [];

  onEvent(event: SimEvent): void {
    if (event.type === 'write') this.onWrite(event.before, event.after);
    else if (event.type === 'call') this.onCall(event);
  }

  /** What the parents of `jobId` call for so far; undefined for a job that is no callback or `on_failure` dependant. */
  expected(jobId: string): WaiterDue | undefined {
    const waiter = this.waiters.get(jobId);
    return waiter && this.due(waiter);
  }

  /**
   * Once every job a waiter waits for has ended, its latch is down: it waits no longer. In a run
   * that drained, one whose jobs' ends call for it has run, and one whose do not is not left due;
   * in a run that did not, a due job that never ran is the liveness oracle's to count.
   */
  override finish(end: RunEnd): void {
    for (const waiter of this.waiters.values()) {
      if (waiter.claimed || waiter.operatorCancelled || waiter.flagged || waiter.ends.size < waiter.parents.length) continue;
      const state = this.rows.get(waiter.id)?.state ?? 'unknown';
      const due = this.due(waiter);
      if (state === 'awaiting_parents') this.flag(`${this.label(waiter)} still waits ${this.though(waiter)}`);
      else if (due === 'skipped' && !TERMINAL.has(state)) this.flag(`${this.label(waiter)} is ${state} ${this.though(waiter)}`);
      else if (due === 'runs' && end.drained) this.flag(`${this.label(waiter)} never ran ${this.though(waiter)}; it is ${state}`);
    }
  }

  private onWrite(before: RowView | undefined, after: RowView): void {
    this.rows.set(after.id, after);
    if (TERMINAL.has(after.state)) for (const dependant of this.dependants.get(after.id) ?? []) if (!dependant.ends.has(after.id)) dependant.ends.set(after.id, after.state);
    const waiter = this.waiters.get(after.id);
    if (waiter === undefined) return;
    if (after.state === 'running' && (before?.state !== 'running' || before.attempt !== after.attempt)) this.checkClaim(waiter, after);
    // A running job is cancelled only at an operator's request, which the cancel names.
    if (after.state === 'cancelled' && before !== undefined && (before.state === 'awaiting_parents' || before.state === 'scheduled')) {
      this.cancels.push({ waiter, why: this.cancelFault(waiter) });
    }
  }

  private onCall(call: CallEvent): void {
    if (call.error === null && call.caller.kind === 'operator') this.operatorCancels(call);
    for (const { waiter, why } of this.cancels) this.judgeCancel(waiter, why);
    this.cancels = [];
    if (call.error !== null || call.result === null) return;
    if (call.op === 'jobEnqueueBatch') this.onBatch(call.result as EnqueueBatchResult);
    else if (call.op === 'jobEnqueueMany') this.onEnqueue(call.args as readonly LoggedInput[], call.result as readonly EnqueueResult[]);
    else if (call.op === 'jobListBatches') for (const summary of call.result as readonly LoggedSummary[]) this.checkSummary(call.op, summary);
    else if (call.op === 'jobBatch') this.checkSummary(call.op, call.result as LoggedSummary);
  }

  private onBatch({ batchId, jobs, callbacks }: EnqueueBatchResult): void {
    const parents = jobs.map((job) => job.id);
    const waiters = CALLBACK_KEYS.filter(([key]) => callbacks[key] !== undefined).map(([key, kind]) => this.waiter(callbacks[key]!, kind, parents, batchId));
    this.batches.set(batchId, { jobs: parents, callbacks: waiters });
  }

  /** A dependant in mode `on_failure` that the enqueue wrote; one already stored joins nothing. */
  private onEnqueue(inputs: readonly LoggedInput[], results: readonly EnqueueResult[]): void {
    inputs.forEach((input, i) => {
      if (input.dependencyMode !== 'on_failure' || results[i]?.created !== true || this.waiters.has(input.id)) return;
      const waiter = this.waiter(input.id, 'failure', input.dependsOn, null);
      // Its parents may have ended before it was written: then the store decided at the insert.
      if (this.rows.get(input.id)?.state === 'cancelled') this.judgeCancel(waiter, this.cancelFault(waiter));
    });
  }

  private waiter(id: string, kind: BatchCallbackKind, parents: readonly string[], batchId: string | null): Waiter {
    const waiter: Waiter = { id, kind, parents, batchId, ends: new Map(), claimed: false, operatorCancelled: false, flagged: false };
    this.waiters.set(id, waiter);
    for (const parent of parents) {
      const state = this.rows.get(parent)?.state;
      if (state !== undefined && TERMINAL.has(state)) waiter.ends.set(parent, state);
      this.dependants.set(parent, [...(this.dependants.get(parent) ?? []), waiter]);
    }
    return waiter;
  }

  /** An operator's cancel of a waiter, alone or with its batch: the waiter need not run. */
  private operatorCancels(call: CallEvent): void {
    const [params] = call.args as readonly [{ readonly jobId?: string; readonly batchId?: string }];
    if (call.op === 'jobCancel') {
      const waiter = params?.jobId === undefined ? undefined : this.waiters.get(params.jobId);
      if (waiter) waiter.operatorCancelled = true;
    } else if (call.op === 'jobCancelBatch' && params?.batchId !== undefined) {
      for (const waiter of this.batches.get(params.batchId)?.callbacks ?? []) waiter.operatorCancelled = true;
      const { cancelled, cancelRequested } = call.result as { cancelled: number; cancelRequested: number };
      if (cancelled + cancelRequested > 0) this.batchCancels += 1;
    }
  }

  private judgeCancel(waiter: Waiter, why: string | null): void {
    if (waiter.operatorCancelled) return;
    if (why !== null) {
      this.flag(why);
      waiter.flagged = true;
    } else if (waiter.batchId === null) this.watchersSkipped += 1;
    else this.callbacksSkipped += 1;
  }

  /** Why the store may not cancel the waiter now, or null when its parents' ends call for it. */
  private cancelFault(waiter: Waiter): string | null {
    if (this.due(waiter) === 'skipped') return null;
    const open = waiter.parents.find((parent) => !waiter.ends.has(parent));
    const why = open !== undefined ? `while ${open} was ${this.rows.get(open)?.state ?? 'unknown'}` : this.though(waiter);
    return `${this.label(waiter)} was cancelled ${why}, and no operator cancelled it`;
  }

  private checkClaim(waiter: Waiter, row: RowView): void {
    const open = waiter.parents.filter((parent) => !waiter.ends.has(parent));
    const start = `${this.label(waiter)} started attempt ${row.attempt}`;
    if (open.length > 0) {
      this.flag(`${start} while ${open[0]} was ${this.rows.get(open[0]!)?.state ?? 'unknown'}${open.length > 1 ? ` (and ${open.length - 1} more had not ended)` : ''}`);
      waiter.flagged = true;
    } else if (this.due(waiter) === 'skipped') {
      this.flag(`${start} ${this.though(waiter)}`);
      waiter.flagged = true;
    }
    if (!waiter.claimed) {
      if (waiter.batchId === null) this.watchersRun += 1;
      else this.callbacksRun += 1;
    }
    waiter.claimed = true;
  }

  /** What the parents' first ends call for: onSuccess is off at the first failure, the others wait for every end. */
  private due({ kind, parents, ends: settled }: Waiter): WaiterDue {
    const ends = parents.map((parent) => settled.get(parent));
    const failed = ends.some((end) => end !== undefined && end !== 'succeeded');
    if (kind === 'success' && failed) return 'skipped';
    if (ends.some((end) => end === undefined)) return 'waits';
    return kind === 'failure' && !failed ? 'skipped' : 'runs';
  }

  private label({ id, kind, batchId }: Waiter): string {
    return batchId === null ? `on_failure dependant ${id}` : `${LABEL[kind]} ${id} of batch ${batchId}`;
  }

  /** How the parents ended, all of them by now: what a claim, a cancel or the lack of either went against. */
  private though(waiter: Waiter): string {
    const failed = waiter.parents.some((parent) => (waiter.ends.get(parent) ?? 'succeeded') !== 'succeeded');
    const why = waiter.kind === 'complete' ? 'every job it waits for ended' : failed ? 'a job it waits for did not succeed' : 'every job it waits for succeeded';
    return `though ${why} (${this.ends(waiter)})`;
  }

  /** The parents' first ends, counted by state: `succeeded×2 dead_lettered×1`. */
  private ends(waiter: Waiter): string {
    const counts = new Map<string, number>();
    for (const parent of waiter.parents) {
      const end = waiter.ends.get(parent) ?? 'open';
      counts.set(end, (counts.get(end) ?? 0) + 1);
    }
    return [...counts].map(([state, n]) => `${state}×${n}`).join(' ');
  }

  private checkSummary(op: string, summary: LoggedSummary | null): void {
    if (summary === null) return;
    const batch = this.batches.get(summary.id);
    if (batch === undefined) {
      this.flag(`${op} listed batch ${summary.id}, which no enqueue wrote`);
      return;
    }
    const states = batch.jobs.map((id) => this.rows.get(id)?.state);
    const count = (test: (state: JobState) => boolean) => states.filter((state) => state !== undefined && test(state)).length;
    const pending = count((state) => OPEN.has(state));
    const stood = {
      total: count(() => true),
      pending,
      succeeded: count((state) => state === 'succeeded'),
      failed: count(isDeadLetterState),
      cancelled: count((state) => state === 'cancelled'),
      ended: pending === 0,
      callbacks: batch.callbacks.map((waiter) => `${waiter.kind}:${this.rows.get(waiter.id)?.state ?? 'unknown'}`).join(' '),
    };
    const said = { ...summary, callbacks: summary.callbacks.map(({ kind, state }) => `${kind}:${state}`).join(' ') };
    const keys = Object.keys(stood) as (keyof typeof stood)[];
    const wrong = keys.filter((key) => said[key] !== stood[key]);
    if (wrong.length > 0) this.flag(`${op} said batch ${summary.id} has ${wrong.map((key) => `${key} ${String(said[key])}`).join(', ')}; it has ${wrong.map((key) => `${key} ${String(stood[key])}`).join(', ')}`);
  }
}
