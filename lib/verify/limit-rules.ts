import type { HistoryEntry, JobStore } from '../store/index.js';
import type { VerifyViolation } from './history-rules.js';
import type { LimitTimelines } from './limit-timeline.js';
import { StartTimes } from './start-times.js';
import { MAX_WAITING, type StampMargins } from './stamp-margins.js';

/** An attempt that has started and not yet ended, as the watch holds it. */
interface Open {
  readonly start: HistoryEntry;
  readonly keys: readonly string[];
  /** Claims over a cap that wait to learn whether this attempt's lease was live at their moment. */
  readonly watchers: Suspect[];
}

/** A claim that started a job while its cap looked full: judged once the jobs it counted have ended. */
interface Suspect {
  readonly start: HistoryEntry;
  readonly key: string;
  readonly max: number;
  pending: number;
  readonly live: HistoryEntry[];
}

const at = (ms: number) => new Date(ms).toISOString();

/**
 * Judges, in log order, every start (an entry into `running`) against the concurrency and rate
 * limits of its queue and concurrency key, as the audit log says they were around its moment. It
 * holds only the attempts running at each point and each rate key's starts within its window, so
 * its memory follows the jobs running and the limits, not the history.
 *
 * A claim broke a cap if, when it started a job, as many others already held live leases under
 * the cap as it allows: started before it, ended after it, with a lease that ran past it (read
 * from the entry that ended it, or from the stored job while it still runs), each by
 * {@link StampMargins.overlapMs}. A claim broke a rate if its start is one more than the rate allows
 * within a window that holds it.
 */
export class LimitWatch {
  readonly violations: VerifyViolation[] = [];
  /** Starts in the range judged against a concurrency limit known at their moment. */
  capStarts = 0;
  /** Starts in the range judged against a rate limit known over their window. */
  rateStarts = 0;
  /** Starts in the range whose job is no longer stored, so their queue and key are unknown: counted against no limit. */
  unattributed = 0;
  /** Starts that looked over a cap while MAX_WAITING others waited: not judged. */
  unjudged = 0;
  private readonly open = new Map<string, Open>();
  private readonly openByKey = new Map<string, Set<Open>>();
  private readonly recentStarts = new Map<string, StartTimes>();
  private waiting = 0;

  constructor(
    private readonly timelines: LimitTimelines,
    private readonly margin: StampMargins,
    private readonly inRange: (entry: HistoryEntry) => boolean,
  ) {}

  /** One entry, with the limit keys of its job (undefined when its row is gone). */
  see(entry: HistoryEntry, keys: readonly string[] | undefined): void {
    const held = this.open.get(entry.jobId);
    if (held) this.end(held, entry.at.getTime(), entry.leaseUntil);
    if (entry.state !== 'running') return;
    if (!keys) {
      if (this.inRange(entry)) this.unattributed += 1;
      return;
    }
    for (const key of keys) {
      if (this.inRange(entry)) this.judgeCap(entry, key);
      this.judgeRate(entry, key);
    }
    const attempt: Open = { start: entry, keys, watchers: [] };
    this.open.set(entry.jobId, attempt);
    for (const key of keys) {
      let set = this.openByKey.get(key);
      if (!set) this.openByKey.set(key, (set = new Set()));
      set.add(attempt);
    }
  }

  /** Ends the attempts still open that claims wait on: a job still running holds the lease its row has. */
  async finish(store: Pick<JobStore, 'jobGet'>): Promise<void> {
    for (const attempt of this.open.values()) {
      if (attempt.watchers.length === 0) continue;
      const row = await store.jobGet({ jobId: attempt.start.jobId });
      const running = row !== null && row.state === 'running' && row.attempt === attempt.start.attempt;
      this.end(attempt, Number.POSITIVE_INFINITY, running ? row.leasedUntil : null);
    }
  }

  // An attempt ran under a claim's count if the change that ended it began well after the claim
  // (one that began about when it did may have committed before the claim counted), and its lease
  // ran past the claim: a heartbeat renews a lease only while live, so its last deadline tells
  // whether it had lapsed by then.
  private end(attempt: Open, endedAt: number, leaseUntil: Date | null): void {
    this.open.delete(attempt.start.jobId);
    for (const key of attempt.keys) this.openByKey.get(key)?.delete(attempt);
    for (const suspect of attempt.watchers) {
      const claimed = suspect.start.at.getTime() + this.margin.overlapMs;
      if (endedAt >= claimed && leaseUntil !== null && leaseUntil.getTime() >= claimed) suspect.live.push(attempt.start);
      suspect.pending -= 1;
      if (suspect.pending === 0) this.settle(suspect);
    }
  }

  private settle(suspect: Suspect): void {
    this.waiting -= 1;
    const { start, key, max, live } = suspect;
    if (live.length < max) return;
    this.violations.push({
      rule: 'limit_exceeded',
      jobId: start.jobId,
      entryIds: [...live.map((e) => e.id).slice(0, 10), start.id].sort((a, b) => a - b),
      message: `Job ${start.jobId} started in entry ${start.id} at ${at(start.at.getTime())} while ${live.length} ${live.length === 1 ? 'job' : 'jobs'} already ran under ${key}, whose limit was ${max}.`,
    });
  }

  private judgeCap(entry: HistoryEntry, key: string): void {
    const t = entry.at.getTime();
    const maxes = this.timelines.caps.get(key)?.valuesDuring(t - this.margin.changeMs, t + this.margin.changeMs);
    if (!maxes) return;
    this.capStarts += 1;
    const max = Math.max(...maxes);
    const held = this.openByKey.get(key);
    if (!held || held.size < max) return;
    const running = [...held].filter((attempt) => attempt.start.at.getTime() <= t - this.margin.overlapMs);
    if (running.length < max) return;
    if (this.waiting >= MAX_WAITING) {
      this.unjudged += 1;
      return;
    }
    this.waiting += 1;
    const suspect: Suspect = { start: entry, key, max, pending: running.length, live: [] };
    for (const attempt of running) attempt.watchers.push(suspect);
  }

  private judgeRate(entry: HistoryEntry, key: string): void {
    const timeline = this.timelines.rates.get(key);
    if (!timeline) return;
    const { changeMs, rateMs } = this.margin;
    const t = entry.at.getTime();
    let starts = this.recentStarts.get(key);
    if (!starts) this.recentStarts.set(key, (starts = new StartTimes()));
    starts.add(t);
    const longest = Math.max(0, ...(timeline.runAt(t, t + changeMs)?.values ?? []).map((r) => r.perMs));
    starts.forgetBefore(t - longest - changeMs);
    if (!this.inRange(entry)) return;
    // The rates in force over the window, from the change that set the limit where there was none:
    // a new limit counts the starts made after it, and one within the margin of it may not be.
    const run = timeline.runAt(t - longest - changeMs, t + changeMs);
    if (!run || t - run.since <= changeMs) return;
    this.rateStarts += 1;
    const max = Math.max(...run.values.map((r) => r.max));
    const perMs = Math.min(...run.values.map((r) => r.perMs));
    // A claim's start is stamped as its transaction began and its entry as its statement did: the
    // window is narrowed by what may lie between them.
    const window = perMs - Math.min(perMs / 2, rateMs);
    const counted = Math.max(t - window, run.since + changeMs);
    // Every window of the rate that holds this start: one ending at it, and, when it was logged
    // after starts stamped later than it, one ending at each of those.
    let within = 0;
    for (const end of starts.from(t, t + window)) within = Math.max(within, starts.countIn(Math.max(end - window, counted), end));
    if (within > max) {
      this.violations.push({
        rule: 'rate_exceeded',
        jobId: entry.jobId,
        entryIds: [entry.id],
        message: `Job ${entry.jobId} started in entry ${entry.id} at ${at(t)}, one of ${within} starts under ${key} within ${window} ms, where its rate allows ${max} per ${perMs} ms.`,
      });
    }
  }
}
