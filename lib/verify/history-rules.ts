import { isTerminalState, type JobState } from '../core/index.js';
import type { HistoryEntry } from '../store/index.js';

/** The promises a history is checked against (docs/verify.md). */
export type VerifyRule =
  | 'illegal_transition'
  | 'terminal_left'
  | 'attempt_skipped'
  | 'two_outcomes'
  | 'stale_lease'
  | 'early_reclaim'
  | 'wrong_holder'
  | 'early_release'
  | 'limit_exceeded'
  | 'rate_exceeded'
  | 'unique_key_twice'
  | 'occurrence_twice'
  | 'lost_job'
  | 'state_mismatch';

/** One broken promise: the rule, the job, and the history entries that show it. */
export interface VerifyViolation {
  readonly rule: VerifyRule;
  readonly jobId: string;
  /** The entries that show it, oldest first (none for a job whose row disagrees with its last entry alone). */
  readonly entryIds: readonly number[];
  /** One sentence. */
  readonly message: string;
}

/** What each rule promises, in the order a report lists them. */
export const VERIFY_RULES: readonly { readonly rule: VerifyRule; readonly promise: string }[] = [
  { rule: 'illegal_transition', promise: 'every change of state is one the lifecycle allows' },
  { rule: 'terminal_left', promise: 'a job that succeeded or was cancelled never moves again' },
  { rule: 'attempt_skipped', promise: 'each attempt starts one after the last (a replay starts again from one)' },
  { rule: 'two_outcomes', promise: 'no attempt has two outcomes' },
  { rule: 'stale_lease', promise: "an outcome only the lease holder writes (success, retry, snooze, release, quarantine) lands by the lease's deadline" },
  { rule: 'early_reclaim', promise: 'a running job is claimed again only once its lease has lapsed' },
  { rule: 'wrong_holder', promise: 'the lease an attempt ends is the one it was claimed with, by the same worker' },
  { rule: 'early_release', promise: 'a dependant that waited is released only once its parents ended as it waits for (succeeded, for dependsOn)' },
  { rule: 'limit_exceeded', promise: 'a claim starts a job only while fewer jobs run under its queue\'s and key\'s concurrency limits than they allow, as they were set then' },
  { rule: 'rate_exceeded', promise: 'no window of a rate limit holds more starts of its queue or key than the rate allows, as it was set then' },
  { rule: 'unique_key_twice', promise: 'no two unfinished jobs of one wire name hold one unique key at once' },
  { rule: 'occurrence_twice', promise: 'no two unfinished jobs are one occurrence (one schedule, one tick) at once' },
  { rule: 'lost_job', promise: 'a job is deleted only once it succeeded or was cancelled (by retention or the lean finish)' },
  { rule: 'state_mismatch', promise: "a stored job's state is the one its history ends in" },
];

/** The states a job may move to from each state, as the lifecycle (core/lifecycle.ts) moves it. */
const NEXT: Readonly<Record<JobState, readonly JobState[]>> = {
  scheduled: ['running', 'cancelled'],
  awaiting_parents: ['scheduled', 'cancelled'],
  running: ['running', 'succeeded', 'scheduled', 'dead_lettered', 'cancelled', 'quarantined'],
  dead_lettered: ['scheduled', 'cancelled'],
  quarantined: ['scheduled', 'cancelled'],
  succeeded: [],
  cancelled: [],
};

/** States only an attempt's outcome writes, so a second one for an attempt is a second outcome. */
const OUTCOME_ONLY: ReadonlySet<JobState> = new Set<JobState>(['succeeded', 'dead_lettered', 'quarantined']);

/** Ends of a lease only its holder writes, through the fence: the sweep and a reclaim write none of them. */
const HOLDER_ONLY: ReadonlySet<JobState> = new Set<JobState>(['succeeded', 'scheduled', 'quarantined']);

/** What a check of one job's entries counted. */
export interface JobCheck {
  readonly transitions: number;
  readonly attempts: number;
  /** Ends of a lease judged against the deadline and holder their entry records. */
  readonly leasesJudged: number;
  /** Ends of a lease whose entry records no deadline (written before schema 26, or by a store that does not record it). */
  readonly leasesUnknown: number;
  readonly violations: VerifyViolation[];
}

const show = (entry: HistoryEntry) => `${entry.state.replace(/_/g, ' ')} (attempt ${entry.attempt}, entry ${entry.id})`;

/**
 * Checks one job's entries, oldest first, against the lifecycle: each step is one the lifecycle
 * allows, with the attempt it gives (a claim counts one up, a replay goes back to zero, anything
 * else keeps it); no attempt ends twice. The first entry is taken as it stands, since retention
 * may have trimmed the ones before it. The first `context` entries (0 or 1) come before the range
 * judged: the changes from them are judged, their own attempts are not counted.
 */
export function checkJobEntries(entries: readonly HistoryEntry[], context = 0): JobCheck {
  const violations: VerifyViolation[] = [];
  const ended = new Set<number>();
  const attempts = entries.slice(context).filter((entry) => entry.state === 'running').length;
  let leasesJudged = 0;
  let leasesUnknown = 0;
  for (let i = 1; i < entries.length; i++) {
    const prev = entries[i - 1]!;
    const next = entries[i]!;
    const ids = [prev.id, next.id];
    const jobId = next.jobId;
    if (prev.state === 'running' && next.state !== 'running' && next.attempt === prev.attempt) ended.add(prev.attempt);
    if (OUTCOME_ONLY.has(next.state) && ended.has(next.attempt) && !(prev.state === 'running' && prev.attempt === next.attempt)) {
      violations.push({ rule: 'two_outcomes', jobId, entryIds: ids, message: `Attempt ${next.attempt} of job ${jobId} had an outcome already, and ${show(next)} is a second one.` });
      continue;
    }
    if (prev.state === 'succeeded' || prev.state === 'cancelled') {
      violations.push({ rule: 'terminal_left', jobId, entryIds: ids, message: `Job ${jobId} moved from ${show(prev)}, which is final, to ${show(next)}.` });
      continue;
    }
    if (!NEXT[prev.state].includes(next.state)) {
      violations.push({ rule: 'illegal_transition', jobId, entryIds: ids, message: `Job ${jobId} moved from ${show(prev)} to ${show(next)}, a change the lifecycle never makes.` });
      continue;
    }
    const expected = next.state === 'running' ? prev.attempt + 1 : next.state === 'scheduled' && isTerminalState(prev.state) ? 0 : prev.attempt;
    if (next.attempt !== expected) {
      violations.push({
        rule: 'attempt_skipped',
        jobId,
        entryIds: ids,
        message: `Job ${jobId} moved from ${show(prev)} to ${show(next)}, where the attempt should be ${expected}.`,
      });
    }
    // A replay starts the attempts again: an attempt number seen before the replay may end again.
    if (next.state === 'scheduled' && isTerminalState(prev.state)) ended.clear();
    if (prev.state === 'running') {
      const found = judgeLease(prev, next);
      if (found === undefined) leasesUnknown += 1;
      else {
        leasesJudged += 1;
        if (found !== null) violations.push(found);
      }
    }
  }
  return { transitions: Math.max(0, entries.length - 1), attempts, leasesJudged, leasesUnknown, violations };
}

const at = (date: Date) => date.toISOString();

/**
 * Judges the end of the lease `running` began, as `next` records it: null when it holds, a
 * violation when it does not, undefined when the entries do not record the lease. A change the
 * holder writes lands before the deadline (the fence compares them on the clock that stamps the
 * entry); a reclaim, after it; and either ends the lease of the worker that took it. A dead letter
 * or cancel may come from the holder or from the sweep of a lapsed lease, so its time says nothing.
 */
function judgeLease(running: HistoryEntry, next: HistoryEntry): VerifyViolation | null | undefined {
  const lease = next.leaseUntil ?? null;
  if (lease === null || running.workerId === null || running.workerId === undefined) return undefined;
  const jobId = next.jobId;
  const ids = [running.id, next.id];
  if (next.workerId !== null && next.state !== 'running' && next.workerId !== running.workerId) {
    return { rule: 'wrong_holder', jobId, entryIds: ids, message: `Job ${jobId} was claimed by ${running.workerId} in ${show(running)}, but ${show(next)} ended the lease of ${next.workerId}.` };
  }
  if (next.state === 'running' && next.at < lease) {
    return { rule: 'early_reclaim', jobId, entryIds: ids, message: `Job ${jobId} was claimed again in ${show(next)} at ${at(next.at)}, before its lease ran out at ${at(lease)}.` };
  }
  // After, not at: PostgreSQL's fence compares microseconds, and an entry read back to the
  // millisecond may show an outcome in the lease's last millisecond at its deadline.
  if (HOLDER_ONLY.has(next.state) && next.at > lease) {
    return { rule: 'stale_lease', jobId, entryIds: ids, message: `Job ${jobId} moved to ${show(next)} at ${at(next.at)}, after its lease ran out at ${at(lease)}.` };
  }
  return null;
}
