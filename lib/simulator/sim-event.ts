import { createHash, type Hash } from 'node:crypto';
import type { BatchCallbackKind, JobState } from '../core/index.js';
import type { JobRow } from '../store/index.js';

/** The fields of a job row the oracles read. */
export interface RowView {
  readonly id: string;
  readonly name: string;
  readonly queue: string;
  readonly state: JobState;
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly snoozes: number;
  readonly workerId: string | null;
  readonly leasedUntil: number | null;
  readonly runAt: number;
  readonly priority: number;
  readonly cancelRequested: boolean;
  readonly scheduleId: string | null;
  readonly scheduledFor: number;
  readonly concurrencyKey: string | null;
  readonly uniqueKey: string | null;
  readonly pendingParents: number;
  /** The first line of the job's last error (see {@link errorLine}). */
  readonly lastError: string | null;
  /** The last progress reported, as the stored JSON text. */
  readonly progress: string | null;
  /**
   * The debounce or throttle window the job opened at enqueue (its end in epoch ms); absent when
   * none, so the events of a job without one hash as they would without this field.
   */
  readonly window?: RowWindow;
  /**
   * The batch the job is part of, or a callback of (`callback` says which); absent when none, so
   * the events of a job outside batches hash as they would without this field.
   */
  readonly batch?: RowBatch;
  /** The job's fair group; absent when none, so the events of an ungrouped job hash as they would without this field. */
  readonly group?: string;
}

/** A job's batch, as {@link RowView} carries it. */
export interface RowBatch {
  readonly id: string;
  readonly callback: BatchCallbackKind | null;
}

/** A job's debounce or throttle window, as {@link RowView} carries it. */
export interface RowWindow {
  readonly kind: 'debounce' | 'throttle';
  readonly key: string;
  readonly endsAt: number;
}

/**
 * An error as events carry it: its first line. The rest is a stack, whose file paths would make a
 * run's hash depend on where the code is checked out; the first line is enough to tell an error
 * recorded from one dropped.
 */
export function errorLine(error: string | null): string | null {
  return error === null ? null : error.split('\n')[0]!;
}

/** The fields of a row the event log keeps (the payload and output stay out of it; the simulator's progress is ids and a step). */
export function rowView(row: JobRow): RowView {
  const { id, name, queue, state, attempt, maxAttempts, snoozes, workerId, leasedUntil, runAt, priority, cancelRequested, scheduleId, scheduledFor, concurrencyKey, uniqueKey, pendingParents, lastError, progress } = row;
  const view: RowView = { id, name, queue, state, attempt, maxAttempts, snoozes, workerId, leasedUntil, runAt, priority, cancelRequested, scheduleId, scheduledFor, concurrencyKey, uniqueKey, pendingParents, lastError: errorLine(lastError), progress };
  const windowed = row.windowKind === null ? view : { ...view, window: { kind: row.windowKind, key: row.windowKey!, endsAt: row.windowEndsAt! } };
  const batched = row.batchId === null ? windowed : { ...windowed, batch: { id: row.batchId, callback: row.batchCallback } };
  return row.groupKey === null ? batched : { ...batched, group: row.groupKey };
}

/** Who made a store call: a worker node, the producer, or the operator. */
export type Caller = { readonly kind: 'worker'; readonly workerId: string } | { readonly kind: 'producer' } | { readonly kind: 'operator' };

/**
 * What happened in a run, in the order the store saw it. Effects (`write`, `edge`, `log`, `slot`)
 * come first, then the `call` that caused them, carrying its request and what the store returned.
 */
export type SimEvent =
  | { readonly type: 'write'; readonly at: number; readonly before: RowView | undefined; readonly after: RowView }
  | { readonly type: 'edge'; readonly at: number; readonly parentId: string; readonly childId: string }
  | { readonly type: 'log'; readonly at: number; readonly jobId: string; readonly state: JobState; readonly attempt: number; readonly error: string | null }
  | { readonly type: 'slot'; readonly at: number; readonly jobId: string; readonly op: 'take' | 'release' }
  | {
      readonly type: 'call';
      readonly at: number;
      readonly caller: Caller;
      readonly op: string;
      readonly args: unknown;
      /** What the store returned (also when the caller never got it), or why it refused. */
      readonly result: unknown;
      readonly error: string | null;
    }
  /**
   * A handler started or finished running an attempt; a start with a payload from a debounced or
   * throttled enqueue names that enqueue (`from`, see SimPayload).
   */
  | { readonly type: 'exec'; readonly at: number; readonly workerId: string; readonly jobId: string; readonly attempt: number; readonly phase: 'start' | 'end'; readonly from?: string }
  /**
   * A call of the batch handler began (`start`: the jobs it was given, in order, with the attempt
   * and wire name each job's context named, and the size the handler declared) or ended (`end`:
   * the jobs it failed with `fail`, and whether the call threw). `call` ties the two together.
   */
  | BatchCallStart
  | BatchCallEnd
  /** The producer learned these jobs are stored (its enqueue was acknowledged). */
  | { readonly type: 'ack'; readonly at: number; readonly ids: readonly string[] }
  | { readonly type: 'fault'; readonly at: number; readonly kind: FaultKind; readonly target: string }
  /** A node's graceful stop (the `shutdown` fault) resolved. */
  | { readonly type: 'stopped'; readonly at: number; readonly target: string }
  | { readonly type: 'phase'; readonly at: number; readonly phase: 'liveness' };

/** A batch handler's call began: see {@link SimEvent}. */
export interface BatchCallStart {
  readonly type: 'batch_call';
  readonly phase: 'start';
  readonly at: number;
  readonly workerId: string;
  readonly call: string;
  /** The wire name the call was made for (its context's). */
  readonly name: string;
  /** The most jobs the handler declared it takes in one call. */
  readonly size: number;
  readonly jobs: readonly { readonly jobId: string; readonly attempt: number; readonly name: string }[];
}

/** A batch handler's call ended: see {@link SimEvent}. */
export interface BatchCallEnd {
  readonly type: 'batch_call';
  readonly phase: 'end';
  readonly at: number;
  readonly workerId: string;
  readonly call: string;
  /** The jobs the handler failed with `fail`, in the order it failed them. */
  readonly failed: readonly string[];
  /** The call threw (a planned failure, or its signal aborted while it waited). */
  readonly threw: boolean;
}

/** The faults a run injects, by name. */
export type FaultKind =
  | 'crash'
  | 'isolate_fail'
  | 'isolate_withhold'
  | 'pause'
  | 'hint_lost'
  | 'hint_duplicated'
  | 'hint_delayed'
  | 'ack_lost'
  | 'operator_cancel'
  | 'operator_replay'
  | 'operator_discard'
  | 'operator_limit'
  | 'operator_rate_limit'
  | 'operator_batch_cancel'
  | 'shutdown';

/** Something that reads a run's events as they happen. */
export interface SimListener {
  onEvent(event: SimEvent): void;
}

/** Fans events out to listeners and folds every one into a hash, so two runs can be compared exactly. */
export class EventLog {
  private readonly hash: Hash = createHash('sha256');
  count = 0;

  constructor(private readonly listeners: readonly SimListener[]) {}

  emit(event: SimEvent): void {
    this.count += 1;
    this.hash.update(JSON.stringify(event, bigintSafe));
    this.hash.update('\n');
    for (const listener of this.listeners) listener.onEvent(event);
  }

  digest(): string {
    return this.hash.copy().digest('hex');
  }
}

function bigintSafe(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}
