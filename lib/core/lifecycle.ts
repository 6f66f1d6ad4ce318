import { isDeadLetterState, isTerminalState, type JobState } from './job-state.js';

/** `lastError` of a job whose lease lapsed: the attempt is charged as if it had thrown. */
export const LEASE_EXPIRED = 'lease expired';
/** `lastError` of a job handed back on shutdown when it had no attempts left. */
export const RELINQUISHED_ON_FINAL_ATTEMPT = 'lease relinquished on final attempt';
/** `lastError` of a job handed back on shutdown with attempts left (or ended, when cancel was requested). */
export const LEASE_RELINQUISHED = 'lease relinquished';

/**
 * The part of a job the lifecycle reads and writes. Times are epoch milliseconds from the store's
 * clock; `output` is JSON text.
 */
export interface LifecycleFields {
  readonly state: JobState;
  readonly runAt: number;
  readonly attempt: number;
  readonly maxAttempts: number;
  /** Times the job snoozed; each snooze also raised `maxAttempts` by one. */
  readonly snoozes: number;
  readonly workerId: string | null;
  readonly leasedUntil: number | null;
  readonly cancelRequested: boolean;
  readonly lastError: string | null;
  readonly output: string | null;
  readonly finishedAt: number | null;
  readonly updatedAt: number;
}

/** Something that happens to one job. Worker events carry the lease they claim to hold. */
export type JobEvent =
  | { readonly kind: 'claim'; readonly workerId: string; readonly leaseMs: number }
  | { readonly kind: 'heartbeat'; readonly workerId: string; readonly attempt: number; readonly leaseMs: number }
  | { readonly kind: 'succeed'; readonly workerId: string; readonly attempt: number; readonly output: string | null }
  | {
      readonly kind: 'fail';
      readonly workerId: string;
      readonly attempt: number;
      readonly error: string;
      readonly retryDelayMs: number;
    }
  | { readonly kind: 'dead_letter'; readonly workerId: string; readonly attempt: number; readonly error: string }
  /** The handler asked to run again after `delayMs`, without an error and without spending its retry budget. */
  | { readonly kind: 'snooze'; readonly workerId: string; readonly attempt: number; readonly delayMs: number }
  | { readonly kind: 'quarantine'; readonly workerId: string; readonly attempt: number; readonly reason: string }
  | { readonly kind: 'relinquish'; readonly workerId: string; readonly attempt: number }
  | { readonly kind: 'expire' }
  | { readonly kind: 'replay' }
  /**
   * An operator cancels the job. With `onlyFrom`, only a job in one of those states: a bulk discard
   * of dead letters names them, so a job replayed since its listing is refused, not cancelled.
   */
  | { readonly kind: 'cancel'; readonly onlyFrom?: readonly JobState[] }
  /** An operator asks a `scheduled` job that is not yet due (a later run time or a retry wait) to run now. */
  | { readonly kind: 'run_now' }
  /** The last qualifying parent finished: an `awaiting_parents` job becomes due. */
  | { readonly kind: 'release' }
  /** A parent failed for good and the job waits `on_success`: it is cancelled, and so are its own dependants. */
  | { readonly kind: 'cascade_cancel'; readonly parentId: string; readonly parentState: JobState }
  /** An `on_failure` dependant whose last parent ended with none failed: cancelled, it does not run. */
  | { readonly kind: 'parents_succeeded' };

/** Work the store must do beyond rewriting the job's own fields, inside the same write. */
export type Effect =
  /** The job became claimable now: send a wake-up hint to idle workers. */
  | { readonly type: 'wake' }
  /** The job was dead-lettered or quarantined: if a schedule minted it, that schedule stops minting. */
  | { readonly type: 'halt_schedule' }
  /** The job became terminal: settle the edges to the jobs that depend on it (each edge once). */
  | { readonly type: 'settle_dependants' }
  /** The job stopped running: give back its concurrency slots. */
  | { readonly type: 'release_slots' }
  /** The job changed state (or started another attempt): append to its history. */
  | { readonly type: 'history'; readonly state: JobState; readonly attempt: number; readonly error: string | null };

/** Why an event changed nothing. */
export type Rejection =
  /** The reporter does not hold the live lease for that attempt. */
  | 'stale_lease'
  /** A claim found the job not due, leased, exhausted or cancel-requested. */
  | 'not_claimable'
  /** The sweep found a lease that is live, or one that a claim should pick up instead. */
  | 'not_sweepable'
  /** An operator action the current state forbids. */
  | 'illegal_state';

/** What the lifecycle function decided: the job's next fields and their effects, or why not. */
export type Transition =
  | { readonly ok: true; readonly next: LifecycleFields; readonly effects: readonly Effect[] }
  | { readonly ok: false; readonly rejection: Rejection };

/**
 * True when `(workerId, attempt)` is the live lease: the job runs, that worker holds it for that
 * attempt, and the lease has not lapsed. This is the fence on every outcome write.
 */
export function holdsLiveLease(job: LifecycleFields, workerId: string, attempt: number, now: number): boolean {
  return (
    job.state === 'running' &&
    job.workerId === workerId &&
    job.attempt === attempt &&
    job.leasedUntil !== null &&
    job.leasedUntil > now
  );
}

/** True when a running job's lease has lapsed. */
export function hasLapsedLease(job: LifecycleFields, now: number): boolean {
  return job.state === 'running' && job.leasedUntil !== null && job.leasedUntil <= now;
}

/**
 * True when a claim may take the job: a due `scheduled` job, or a `running` one whose lease lapsed
 * with budget left and no cancel request. Queue pauses are the store's to apply.
 */
export function isClaimable(job: LifecycleFields, now: number): boolean {
  if (job.attempt >= job.maxAttempts) return false;
  if (job.state === 'scheduled') return job.runAt <= now;
  return hasLapsedLease(job, now) && !job.cancelRequested;
}

/** True when the maintenance sweep must settle a lapsed lease that no claim will ever take. */
export function needsSweep(job: LifecycleFields, now: number): boolean {
  return hasLapsedLease(job, now) && (job.attempt >= job.maxAttempts || job.cancelRequested);
}

const STALE: Transition = { ok: false, rejection: 'stale_lease' };
const NO_EFFECTS: readonly Effect[] = [];
const WAKE: readonly Effect[] = [{ type: 'wake' }];

/**
 * The lifecycle as one pure function: given a job, an event and the store's current instant, the
 * job's next fields and the effects to apply with them, or why nothing may change. The in-memory
 * store applies it directly; the SQL adapters encode the same rules in their statements, and the
 * conformance suite holds all of them to it.
 */
export function transition(job: LifecycleFields, event: JobEvent, now: number): Transition {
  const result = decide(job, event, now);
  if (!result.ok) return result;
  const { next } = result;
  if (next.state === job.state && next.attempt === job.attempt) return result;
  const effects: Effect[] = [...result.effects, { type: 'history', state: next.state, attempt: next.attempt, error: historyError(job, next) }];
  if (job.state === 'running' && next.state !== 'running') effects.push(RELEASE_SLOTS);
  // A dead letter discarded (cancelled) settles what its end left open: a sequence it blocked.
  if ((isTerminalState(next.state) && !isTerminalState(job.state)) || (next.state === 'cancelled' && isDeadLetterState(job.state))) effects.push(SETTLE_DEPENDANTS);
  if (isDeadLetterState(next.state) && job.state !== next.state) effects.push(HALT_SCHEDULE);
  return { ok: true, next, effects };
}

/**
 * The error a history entry carries: the one that ended an attempt, whenever an attempt ends other
 * than by success (a failure, a dead letter, a quarantine, a cancel, a lapse, a relinquish), even
 * when its text repeats the previous attempt's; and any error a transition newly sets (a cascade
 * cancel). A claim, a release or a replay carries none. The SQL adapters' triggers encode the same
 * rule, from the old and new row alone, which is why every way out of `running` sets `lastError`:
 * an error, or null for a snooze, which ended without one.
 */
export function historyError(before: LifecycleFields, after: LifecycleFields): string | null {
  if (after.lastError !== before.lastError) return after.lastError;
  return before.state === 'running' && after.state !== 'succeeded' ? after.lastError : null;
}

const HALT_SCHEDULE: Effect = { type: 'halt_schedule' };
const SETTLE_DEPENDANTS: Effect = { type: 'settle_dependants' };
const RELEASE_SLOTS: Effect = { type: 'release_slots' };

function decide(job: LifecycleFields, event: JobEvent, now: number): Transition {
  switch (event.kind) {
    case 'claim':
      if (!isClaimable(job, now)) return { ok: false, rejection: 'not_claimable' };
      return ok({
        ...job,
        state: 'running',
        attempt: job.attempt + 1,
        workerId: event.workerId,
        leasedUntil: now + event.leaseMs,
        // A reclaim means the previous attempt lapsed; say so until this attempt reports.
        lastError: job.state === 'running' ? LEASE_EXPIRED : job.lastError,
        updatedAt: now,
      });

    case 'heartbeat':
      if (!holdsLiveLease(job, event.workerId, event.attempt, now)) return STALE;
      return ok({ ...job, leasedUntil: now + event.leaseMs, updatedAt: now });

    case 'succeed':
      if (!holdsLiveLease(job, event.workerId, event.attempt, now)) return STALE;
      return ok(finish(job, 'succeeded', now, { output: event.output, lastError: job.lastError }));

    case 'fail':
      if (!holdsLiveLease(job, event.workerId, event.attempt, now)) return STALE;
      if (job.cancelRequested) return ok(finish(job, 'cancelled', now, { lastError: event.error }));
      if (job.attempt >= job.maxAttempts) return ok(finish(job, 'dead_lettered', now, { lastError: event.error }));
      return ok(requeue(job, now, now + event.retryDelayMs, event.error));

    case 'dead_letter':
      if (!holdsLiveLease(job, event.workerId, event.attempt, now)) return STALE;
      return ok(finish(job, job.cancelRequested ? 'cancelled' : 'dead_lettered', now, { lastError: event.error }));

    case 'snooze':
      if (!holdsLiveLease(job, event.workerId, event.attempt, now)) return STALE;
      // The attempt counter still counts this run: (workerId, attempt) must never name two runs, or a
      // late report of this one could land on the next. The budget grows by one instead.
      if (job.cancelRequested) return ok(finish(job, 'cancelled', now, { lastError: null }));
      return ok({ ...requeue(job, now, now + event.delayMs, null), maxAttempts: job.maxAttempts + 1, snoozes: job.snoozes + 1 });

    case 'quarantine':
      if (!holdsLiveLease(job, event.workerId, event.attempt, now)) return STALE;
      return ok(finish(job, job.cancelRequested ? 'cancelled' : 'quarantined', now, { lastError: event.reason }));

    case 'relinquish':
      if (!holdsLiveLease(job, event.workerId, event.attempt, now)) return STALE;
      // The attempt ended unfinished: say so, as a lapse does, rather than keep an older attempt's error.
      if (job.cancelRequested) return ok(finish(job, 'cancelled', now, { lastError: LEASE_RELINQUISHED }));
      if (job.attempt >= job.maxAttempts) {
        return ok(finish(job, 'dead_lettered', now, { lastError: RELINQUISHED_ON_FINAL_ATTEMPT }));
      }
      return ok(requeue(job, now, now, LEASE_RELINQUISHED), WAKE);

    case 'expire':
      if (!needsSweep(job, now)) return { ok: false, rejection: 'not_sweepable' };
      return ok(finish(job, job.cancelRequested ? 'cancelled' : 'dead_lettered', now, { lastError: LEASE_EXPIRED }));

    case 'replay':
      if (!isDeadLetterState(job.state)) return { ok: false, rejection: 'illegal_state' };
      return ok(
        {
          ...job,
          state: 'scheduled',
          attempt: 0,
          // The budget snoozes added goes with them: a replayed job starts as it was enqueued.
          maxAttempts: job.maxAttempts - job.snoozes,
          snoozes: 0,
          runAt: now,
          workerId: null,
          leasedUntil: null,
          cancelRequested: false,
          lastError: null,
          output: null,
          finishedAt: null,
          updatedAt: now,
        },
        WAKE,
      );

    case 'cancel':
      if (event.onlyFrom && !event.onlyFrom.includes(job.state)) return { ok: false, rejection: 'illegal_state' };
      if (job.state === 'cancelled') return ok(job);
      if (job.state === 'running') {
        return job.cancelRequested ? ok(job) : ok({ ...job, cancelRequested: true, updatedAt: now });
      }
      // A dead letter or a quarantined job may be discarded: it ends cancelled, keeps its error,
      // and from now on ages out with retention. Its dependants were settled when it ended, but for
      // a sequence's next job that its failure held back, which the cancel releases.
      if (job.state === 'succeeded') return { ok: false, rejection: 'illegal_state' };
      return ok(finish(job, 'cancelled', now, { lastError: job.lastError }));

    case 'run_now':
      if (job.state !== 'scheduled') return { ok: false, rejection: 'illegal_state' };
      // Already due: nothing to change, and the claim that takes it needs no hint.
      if (job.runAt <= now) return ok(job);
      return ok({ ...job, runAt: now, updatedAt: now }, WAKE);

    case 'release':
      if (job.state !== 'awaiting_parents') return { ok: false, rejection: 'illegal_state' };
      return ok({ ...job, state: 'scheduled', runAt: Math.max(job.runAt, now), updatedAt: now }, WAKE);

    case 'cascade_cancel':
      if (job.state !== 'awaiting_parents') return { ok: false, rejection: 'illegal_state' };
      return ok(finish(job, 'cancelled', now, { lastError: `parent ${event.parentId} ended ${event.parentState}` }));

    case 'parents_succeeded':
      if (job.state !== 'awaiting_parents') return { ok: false, rejection: 'illegal_state' };
      return ok(finish(job, 'cancelled', now, { lastError: ALL_PARENTS_SUCCEEDED }));
  }
}

/**
 * The error an `on_failure` job is cancelled with when its last parent ends and none failed. Every
 * store writes this text, so the dashboard and `jobs show` say the same.
 */
export const ALL_PARENTS_SUCCEEDED = 'every parent succeeded, so this on_failure job does not run';

/**
 * The lifecycle's decisions as one value. Stores take it whole so that the simulator's sabotage
 * self-test can hand the in-memory store deliberately broken rules and prove its oracles notice;
 * production code always uses {@link LIFECYCLE_RULES}.
 */
export interface LifecycleRules {
  readonly transition: (job: LifecycleFields, event: JobEvent, now: number) => Transition;
  readonly isClaimable: (job: LifecycleFields, now: number) => boolean;
  readonly needsSweep: (job: LifecycleFields, now: number) => boolean;
}

/** The rules this file defines. */
export const LIFECYCLE_RULES: LifecycleRules = Object.freeze({ transition, isClaimable, needsSweep });

/** What an operator's cancel did, read from the job before and after. */
export type CancelOutcome = 'cancelled' | 'cancel_requested' | 'already_cancelled' | 'already_requested';

/** Names what an operator's cancel did, from the job's fields before and after it. */
export function cancelOutcome(before: LifecycleFields, after: LifecycleFields): CancelOutcome {
  if (before.state === 'cancelled') return 'already_cancelled';
  if (after.state === 'cancelled') return 'cancelled';
  return before.cancelRequested ? 'already_requested' : 'cancel_requested';
}

function ok(next: LifecycleFields, effects: readonly Effect[] = NO_EFFECTS): Transition {
  return { ok: true, next, effects };
}

function finish(
  job: LifecycleFields,
  state: JobState,
  now: number,
  fields: { lastError: string | null; output?: string | null },
): LifecycleFields {
  return {
    ...job,
    state,
    leasedUntil: null,
    lastError: fields.lastError,
    output: fields.output === undefined ? job.output : fields.output,
    finishedAt: now,
    updatedAt: now,
  };
}

function requeue(job: LifecycleFields, now: number, runAt: number, lastError: string | null): LifecycleFields {
  return { ...job, state: 'scheduled', runAt, workerId: null, leasedUntil: null, lastError, updatedAt: now };
}
