import { ALL_PARENTS_SUCCEEDED, isDeadLetterState, isTerminalState, takesDebounce as coreTakesDebounce, type BatchCallbackKind, type JobBatchInfo, type JobRecord } from '../../core/index.js';
import type { BatchSummary, EdgeJob, LimitHolder, RateLimitStatus } from '../../store/index.js';

/** What holds a job back, read from the store; several can hold at once. */
export type WaitReason =
  | { readonly kind: 'queue_paused'; readonly queue: string }
  | { readonly kind: 'limit_full'; readonly target: { readonly queue: string } | { readonly key: string }; readonly max: number; readonly holders: readonly LimitHolder[]; readonly truncated: boolean }
  | { readonly kind: 'rate_limited'; readonly target: { readonly queue: string } | { readonly key: string }; readonly max: number; readonly perMs: number; readonly fullUntil: Date }
  | { readonly kind: 'awaiting_parents'; readonly open: readonly EdgeJob[]; readonly pending: number; readonly total: number | null }
  /**
   * Its sequence edge is open: `before` is the job it runs after. `behind`: that job has not ended;
   * `blocked`: it failed for good and the edge is `block`, so it holds the sequence until an
   * operator replays it (and it succeeds) or cancels it; `in_line`: it ended without its turn
   * (cancelled while it waited), keeps its place, and passes the turn on when the jobs before it end.
   */
  | { readonly kind: 'sequence'; readonly key: string; readonly before: EdgeJob; readonly held: 'behind' | 'blocked' | 'in_line' }
  /**
   * A batch's callback waits for the batch's jobs to end: `pending` of `total` have not (counted
   * from the stored jobs when read); `unsucceeded` ended dead-lettered, quarantined or cancelled.
   */
  | { readonly kind: 'batch_callback'; readonly batchId: string; readonly callback: BatchCallbackKind; readonly pending: number; readonly total: number; readonly unsucceeded: number }
  /**
   * An `on_failure` job was cancelled because every parent succeeded ({@link ALL_PARENTS_SUCCEEDED}):
   * it will not run. `batch` is set for a batch's `onFailure` callback.
   */
  | { readonly kind: 'parents_succeeded'; readonly batch: JobBatchInfo | null }
  | { readonly kind: 'not_due'; readonly runAt: Date }
  | { readonly kind: 'retry_wait'; readonly runAt: Date; readonly failedAttempt: number; readonly lastError: string | null }
  /** The handler snoozed its last attempt (`ctx.snooze`), which leaves no error; `snoozes` counts them all. */
  | { readonly kind: 'snoozed'; readonly runAt: Date; readonly attempt: number; readonly snoozes: number }
  /**
   * A debounced job that has not started: an enqueue of its wire name with `key` gives it that
   * payload and moves `runAt` later, never past `endsAt` (its latest run time).
   */
  | { readonly kind: 'debounced'; readonly runAt: Date; readonly key: string; readonly endsAt: Date }
  | { readonly kind: 'no_worker'; readonly queue: string }
  | { readonly kind: 'leased'; readonly workerId: string; readonly leasedUntil: Date; readonly lapsed: boolean }
  | { readonly kind: 'ready'; readonly queue: string };

/** The facts {@link waitReasons} decides from, gathered by {@link gatherWaitFacts}. */
export interface WaitFacts {
  readonly job: JobRecord;
  /** The store's clock. */
  readonly now: Date;
  readonly queuePaused: boolean;
  /** The queue's and the job's key's limits with their live holders; null where no limit is set. */
  readonly queueLimit: { readonly max: number; readonly holders: readonly LimitHolder[]; readonly truncated: boolean } | null;
  readonly keyLimit: { readonly max: number; readonly holders: readonly LimitHolder[]; readonly truncated: boolean } | null;
  /** The queue's and the job's key's rate limits, their windows read now; null where no rate limit is set. */
  readonly queueRate: RateLimitStatus | null;
  readonly keyRate: RateLimitStatus | null;
  /** The job's parents, for a job awaiting them. */
  readonly parents: { readonly edges: readonly EdgeJob[]; readonly truncated: boolean } | null;
  /** Live nodes that serve the job's queue, or null when the store keeps no node registry. */
  readonly servingNodes: number | null;
  /** The batch of a callback awaiting its batch's jobs, as read now; null otherwise, or when none of its jobs is stored. */
  readonly batch: BatchSummary | null;
}

/**
 * True when a scheduled job that has run waits out a snooze, not a retry's backoff: a snooze is the
 * only way out of `running` that leaves no error.
 */
export function waitsOutSnooze(job: JobRecord): boolean {
  return job.attempt > 0 && job.snoozes > 0 && job.lastError === null;
}

/**
 * True when a scheduled job still takes the enqueues of its debounce key: it was never claimed, so
 * an enqueue with the key moves its run time (the stores' debounce holder, by state and attempt).
 */
export function takesDebounce(job: JobRecord): job is JobRecord & { readonly window: { readonly kind: 'debounce' } } {
  return coreTakesDebounce(job.window?.kind, job.state, job.attempt);
}

/** Why a scheduled job is not due yet: its run time, a debounce, a retry's backoff, or a snooze. */
function notDueReason(job: JobRecord): WaitReason {
  if (takesDebounce(job)) return { kind: 'debounced', runAt: job.runAt, key: job.window.key, endsAt: job.window.endsAt };
  if (job.attempt === 0) return { kind: 'not_due', runAt: job.runAt };
  if (waitsOutSnooze(job)) return { kind: 'snoozed', runAt: job.runAt, attempt: job.attempt, snoozes: job.snoozes };
  return { kind: 'retry_wait', runAt: job.runAt, failedAttempt: job.attempt, lastError: job.lastError };
}

/** How an open sequence edge holds its dependant back, by the state of the job before it. */
function sequenceHold(edge: EdgeJob): 'behind' | 'blocked' | 'in_line' {
  if (edge.sequence === 'block' && isDeadLetterState(edge.state)) return 'blocked';
  // An open edge from a job that ended otherwise: that job ended before its turn came.
  return isTerminalState(edge.state) ? 'in_line' : 'behind';
}

/**
 * The reasons a job awaiting its parents gives: its turn in its sequence, when that edge is open,
 * and its `dependsOn` parents in the words they always had, counted without the sequence edge.
 */
function parentReasons(job: JobRecord, parents: WaitFacts['parents']): WaitReason[] {
  const edges = parents?.edges ?? [];
  const turn = job.sequence === null ? undefined : edges.find((edge) => edge.sequence !== null);
  const others = turn === undefined ? edges : edges.filter((edge) => edge !== turn);
  const reasons: WaitReason[] = [];
  if (turn !== undefined && !turn.settled) reasons.push({ kind: 'sequence', key: job.sequence!.key, before: turn, held: sequenceHold(turn) });
  const pending = job.pendingParents - (turn !== undefined && !turn.settled ? 1 : 0);
  if (pending > 0 || reasons.length === 0) {
    reasons.push({ kind: 'awaiting_parents', open: others.filter((edge) => !edge.settled), pending, total: parents && !parents.truncated ? others.length : null });
  }
  return reasons;
}

/** What a batch's callback waits for: the batch's jobs to end. */
function batchReason(callback: BatchCallbackKind, batch: BatchSummary): WaitReason {
  return { kind: 'batch_callback', batchId: batch.id, callback, pending: batch.pending, total: batch.total, unsucceeded: batch.failed + batch.cancelled };
}

/**
 * Why a job that has ended will not run, when its ending says so: an `on_failure` job (a batch's
 * `onFailure` callback among them) cancelled because every parent succeeded. Empty for any other.
 */
export function endedReasons(job: JobRecord): WaitReason[] {
  if (job.state !== 'cancelled' || job.dependencyMode !== 'on_failure' || job.lastError !== ALL_PARENTS_SUCCEEDED) return [];
  return [{ kind: 'parents_succeeded', batch: job.batch }];
}

/**
 * Why a job that has not finished is not running, or what it waits for while it runs: each reason
 * the facts support, in the order an operator would act on them. A due job that nothing holds back
 * gets `ready`: the next claim by a node that serves its queue takes it.
 */
export function waitReasons(facts: WaitFacts): WaitReason[] {
  const { job, now } = facts;
  if (job.state === 'running') {
    return job.workerId && job.leasedUntil ? [{ kind: 'leased', workerId: job.workerId, leasedUntil: job.leasedUntil, lapsed: job.leasedUntil.getTime() <= now.getTime() }] : [];
  }
  if (job.state !== 'scheduled' && job.state !== 'awaiting_parents') return [];
  const reasons: WaitReason[] = [];
  if (job.state === 'awaiting_parents') {
    // A callback's parents are its batch's jobs, up to 10,000: the batch's counts say more than a list of them.
    if (job.batch?.callback && facts.batch) reasons.push(batchReason(job.batch.callback, facts.batch));
    else reasons.push(...parentReasons(job, facts.parents));
  } else if (job.runAt.getTime() > now.getTime()) {
    reasons.push(notDueReason(job));
  }
  if (facts.queuePaused) reasons.push({ kind: 'queue_paused', queue: job.queue });
  const full = (limit: { readonly max: number; readonly holders: readonly LimitHolder[]; readonly truncated: boolean }) => limit.truncated || limit.holders.length >= limit.max;
  if (facts.queueLimit && full(facts.queueLimit)) reasons.push({ kind: 'limit_full', target: { queue: job.queue }, ...facts.queueLimit });
  if (facts.keyLimit && job.concurrencyKey !== null && full(facts.keyLimit)) reasons.push({ kind: 'limit_full', target: { key: job.concurrencyKey }, ...facts.keyLimit });
  // A full window passes the job over until its oldest start frees; claims do not wait on it. A
  // window that frees before a scheduled job is due does not hold it back.
  const from = job.state === 'scheduled' ? Math.max(now.getTime(), job.runAt.getTime()) : now.getTime();
  const reached = (rate: RateLimitStatus | null) => rate !== null && rate.fullUntil !== null && rate.fullUntil.getTime() > from;
  if (reached(facts.queueRate)) reasons.push({ kind: 'rate_limited', target: { queue: job.queue }, max: facts.queueRate!.max, perMs: facts.queueRate!.perMs, fullUntil: facts.queueRate!.fullUntil! });
  if (job.concurrencyKey !== null && reached(facts.keyRate)) {
    reasons.push({ kind: 'rate_limited', target: { key: job.concurrencyKey }, max: facts.keyRate!.max, perMs: facts.keyRate!.perMs, fullUntil: facts.keyRate!.fullUntil! });
  }
  if (facts.servingNodes === 0) reasons.push({ kind: 'no_worker', queue: job.queue });
  if (reasons.length === 0) reasons.push({ kind: 'ready', queue: job.queue });
  return reasons;
}
