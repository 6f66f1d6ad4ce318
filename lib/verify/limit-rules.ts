import { isTerminalState } from '../core/index.js';
import type { HistoryEntry, JobStore, LimitTarget } from '../store/index.js';
import { limitKeysOf } from '../store/limit-room.js';
import type { VerifyViolation } from './history-rules.js';
import { readLimitTimelines, type LimitTimelines } from './limit-timeline.js';
import { KeyWatch, OCCURRENCES, UNIQUE_KEYS } from './unique-keys.js';

/**
 * How far apart two stamps must be for verify to trust their order. On a store whose writes take
 * turns (memory, SQLite: one write transaction at a time, stamped inside it) the log is the order
 * things happened in, to the millisecond. On PostgreSQL and MySQL, stamps are taken as a statement
 * or transaction begins, a claim may wait for a lock after its stamp, and the log's order is not
 * the order claims counted in (PostgreSQL's is by transaction id): so a shorter overlap of two jobs
 * cannot be told from jobs that ran one after the other.
 */
export interface StampMargins {
  /** A claim is judged against every limit in force this long either side of its stamp. */
  readonly changeMs: number;
  /** A job counts against a claim only if it started this long before it, and ended and held its lease this long after. */
  readonly overlapMs: number;
  /** The most a rate's window is narrowed by (half the window at most): a start's stamp and its entry's may differ by it. */
  readonly rateMs: number;
}

/** Stores with concurrent writers: PostgreSQL and MySQL. */
export const CONCURRENT_MARGINS: StampMargins = { changeMs: 60_000, overlapMs: 2_000, rateMs: 1_000 };

/** Stores whose writes take turns, stamped inside each: memory and SQLite (whose processes share one clock, to the millisecond or so). */
export const SERIAL_MARGINS: StampMargins = { changeMs: 10, overlapMs: 10, rateMs: 10 };

/**
 * Claims that looked over a cap, waiting at once for the jobs they counted to end; one more is not
 * judged, and counted. A job whose lease lapsed with no entry to end it (its queue paused, say)
 * keeps every claim of its key waiting until the end of the log.
 */
export const MAX_WAITING = 10_000;

type LimitStore = Pick<JobStore, 'auditList' | 'historyRead' | 'jobStatusMany' | 'jobGet'> & { readonly capabilities?: Pick<JobStore['capabilities'], 'serialWrites'> };

/** What the limits pass counted. */
export interface LimitCheck {
  /** Starts judged against a concurrency limit known at their moment. */
  readonly capStarts: number;
  /** Starts judged against a rate limit known over their window. */
  readonly rateStarts: number;
  /** Starts whose job is no longer stored, so their queue and key are unknown: counted against no limit. */
  readonly startsUnattributed: number;
  /** Jobs that took a unique key in the range (created or replayed), judged against the jobs that held it. */
  readonly uniqueKeysTaken: number;
  /** Occurrences minted (or replayed) in the range, judged against the jobs that were the same occurrence. */
  readonly occurrencesMinted: number;
  /** Starts, and takings of a key, that looked like breaking a promise while {@link MAX_WAITING} others waited to be judged: not judged. */
  readonly unjudged: number;
  /** Whether the audit log records any limit at all; without one, and with no unique key to follow, the pass reads no history. */
  readonly anyLimit: boolean;
  readonly timelines: LimitTimelines;
  readonly violations: VerifyViolation[];
}

/** An attempt that has started and not yet ended, as the sweep holds it. */
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
 * Judges every start (an entry into `running`) against the concurrency and rate limits of its
 * queue and concurrency key, as the audit log says they were around its moment. The log is read
 * once, in delivery order (the order observers get it), holding only the attempts running at
 * each point and each rate key's starts within its window, so memory follows the jobs running
 * and the limits, not the history.
 *
 * A claim broke a cap if, when it started a job, as many others already held live leases under
 * the cap as it allows: started before it, ended after it, with a lease that ran past it (read
 * from the entry that ended it, or from the stored job while it still runs), each by
 * {@link StampMargins.overlapMs}. A claim broke a rate if its start is one more than the rate allows
 * within a window that holds it.
 */
export async function checkLimits(
  store: LimitStore,
  range: { readonly since: Date | null; readonly until: Date | null; readonly pageSize: number },
  signal?: AbortSignal,
  /** Whether any stored job may hold a unique key or be an occurrence: the same pass then follows who holds each (unique-keys.ts). */
  uniqueKeys = true,
): Promise<LimitCheck> {
  const timelines = await readLimitTimelines(store, signal);
  const margin = store.capabilities?.serialWrites === true ? SERIAL_MARGINS : CONCURRENT_MARGINS;
  const violations: VerifyViolation[] = [];
  const counts = { capStarts: 0, rateStarts: 0, startsUnattributed: 0, uniqueKeysTaken: 0, occurrencesMinted: 0, unjudged: 0 };
  const anyLimit = timelines.caps.size > 0 || timelines.rates.size > 0;
  if (!anyLimit && !uniqueKeys) return { ...counts, anyLimit, timelines, violations };

  const inRange = (entry: HistoryEntry) => (range.since === null || entry.at >= range.since) && (range.until === null || entry.at < range.until);
  const unique = uniqueKeys ? new KeyWatch(UNIQUE_KEYS, margin.overlapMs, inRange) : null;
  const occurrences = uniqueKeys ? new KeyWatch(OCCURRENCES, margin.overlapMs, inRange) : null;
  const open = new Map<string, Open>();
  const openByKey = new Map<string, Set<Open>>();
  const recentStarts = new Map<string, StartTimes>();
  let suspects = 0;

  const settle = (suspect: Suspect) => {
    suspects -= 1;
    if (suspect.live.length < suspect.max) return;
    const { start, key, max, live } = suspect;
    violations.push({
      rule: 'limit_exceeded',
      jobId: start.jobId,
      entryIds: [...live.map((e) => e.id).slice(0, 10), start.id].sort((a, b) => a - b),
      message: `Job ${start.jobId} started in entry ${start.id} at ${at(start.at.getTime())} while ${live.length} ${live.length === 1 ? 'job' : 'jobs'} already ran under ${key}, whose limit was ${max}.`,
    });
  };

  // An attempt ran under a claim's count if the change that ended it began well after the claim
  // (one that began about when it did may have committed before the claim counted), and its lease
  // ran past the claim: a lease is renewed only while live, so its last deadline tells whether it
  // had lapsed by then.
  const end = (attempt: Open, endedAt: number, leaseUntil: Date | null) => {
    open.delete(attempt.start.jobId);
    for (const key of attempt.keys) openByKey.get(key)?.delete(attempt);
    for (const suspect of attempt.watchers) {
      const claimed = suspect.start.at.getTime() + margin.overlapMs;
      if (endedAt >= claimed && leaseUntil !== null && leaseUntil.getTime() >= claimed) suspect.live.push(attempt.start);
      suspect.pending -= 1;
      if (suspect.pending === 0) settle(suspect);
    }
  };

  const judgeCap = (entry: HistoryEntry, key: string) => {
    const t = entry.at.getTime();
    const maxes = timelines.caps.get(key)?.valuesDuring(t - margin.changeMs, t + margin.changeMs);
    if (!maxes) return;
    counts.capStarts += 1;
    const max = Math.max(...maxes);
    const held = openByKey.get(key);
    if (!held || held.size < max) return;
    const running = [...held].filter((attempt) => attempt.start.at.getTime() <= t - margin.overlapMs);
    if (running.length < max) return;
    if (suspects >= MAX_WAITING) {
      counts.unjudged += 1;
      return;
    }
    suspects += 1;
    const suspect: Suspect = { start: entry, key, max, pending: running.length, live: [] };
    for (const attempt of running) attempt.watchers.push(suspect);
  };

  const judgeRate = (entry: HistoryEntry, key: string) => {
    const timeline = timelines.rates.get(key);
    if (!timeline) return;
    const t = entry.at.getTime();
    let starts = recentStarts.get(key);
    if (!starts) recentStarts.set(key, (starts = new StartTimes()));
    starts.add(t);
    const longest = Math.max(0, ...(timeline.runAt(t, t + margin.changeMs)?.values ?? []).map((r) => r.perMs));
    starts.forgetBefore(t - longest - margin.changeMs);
    if (!inRange(entry)) return;
    // The rates in force over the window, from the change that set the limit where there was none:
    // a new limit counts the starts made after it, and one within the margin of it may not be.
    const run = timeline.runAt(t - longest - margin.changeMs, t + margin.changeMs);
    if (!run || t - run.since <= margin.changeMs) return;
    counts.rateStarts += 1;
    const max = Math.max(...run.values.map((r) => r.max));
    const perMs = Math.min(...run.values.map((r) => r.perMs));
    // A claim's start is stamped as its transaction began and its entry as its statement did: the
    // window is narrowed by what may lie between them.
    const window = perMs - Math.min(perMs / 2, margin.rateMs);
    const counted = Math.max(t - window, run.since + margin.changeMs);
    // Every window of the rate that holds this start: one ending at it, and, when it was logged
    // after starts stamped later than it, one ending at each of those.
    let within = 0;
    for (const end of starts.from(t, t + window)) within = Math.max(within, starts.countIn(Math.max(end - window, counted), end));
    if (within > max) {
      violations.push({
        rule: 'rate_exceeded',
        jobId: entry.jobId,
        entryIds: [entry.id],
        message: `Job ${entry.jobId} started in entry ${entry.id} at ${at(t)}, one of ${within} starts under ${key} within ${window} ms, where its rate allows ${max} per ${perMs} ms.`,
      });
    }
  };

  let after: string | undefined;
  for (;;) {
    signal?.throwIfAborted();
    const page = await store.historyRead({ limit: range.pageSize, ...(after === undefined ? {} : { after }) });
    // Read the queue and keys of each job that starts, and of each that may take a unique key.
    const wanted = (e: HistoryEntry) =>
      (anyLimit && e.state === 'running') || (unique !== null && !isTerminalState(e.state) && !unique.holds(e.jobId) && !occurrences!.holds(e.jobId));
    const reading = [...new Set(page.filter(wanted).map((e) => e.jobId))];
    const keysOf = new Map<string, string[]>();
    const uniqueKeyOf = new Map<string, string>();
    const occurrenceOf = new Map<string, string>();
    for (let i = 0; i < reading.length; i += 1_000) {
      for (const row of await store.jobStatusMany({ jobIds: reading.slice(i, i + 1_000) })) {
        keysOf.set(row.id, limitKeysOf(row.queue, row.concurrencyKey));
        if (row.uniqueKey !== null) uniqueKeyOf.set(row.id, row.uniqueKey);
        if (row.scheduleId !== null) occurrenceOf.set(row.id, `${row.scheduleId}\0${row.scheduledFor.toISOString()}`);
      }
    }
    for (const entry of page) {
      const uniqueKey = uniqueKeyOf.get(entry.jobId);
      // A unique key is per wire name, and the entry names the job's.
      unique?.see(entry, uniqueKey === undefined ? null : `${entry.name}\0${uniqueKey}`);
      occurrences?.see(entry, occurrenceOf.get(entry.jobId) ?? null);
      if (!anyLimit) continue;
      const held = open.get(entry.jobId);
      if (held) end(held, entry.at.getTime(), entry.leaseUntil);
      if (entry.state !== 'running') continue;
      const keys = keysOf.get(entry.jobId);
      if (!keys) {
        if (inRange(entry)) counts.startsUnattributed += 1;
        continue;
      }
      for (const key of keys) {
        if (inRange(entry)) judgeCap(entry, key);
        judgeRate(entry, key);
      }
      const attempt: Open = { start: entry, keys, watchers: [] };
      open.set(entry.jobId, attempt);
      for (const key of keys) {
        let set = openByKey.get(key);
        if (!set) openByKey.set(key, (set = new Set()));
        set.add(attempt);
      }
    }
    if (page.length < range.pageSize) break;
    after = page.at(-1)!.position;
  }
  // Jobs still running: their lease is the stored one, while the attempt is the one that started.
  for (const attempt of open.values()) {
    if (attempt.watchers.length === 0) continue;
    const row = await store.jobGet({ jobId: attempt.start.jobId });
    const running = row !== null && row.state === 'running' && row.attempt === attempt.start.attempt;
    end(attempt, Number.POSITIVE_INFINITY, running ? row.leasedUntil : null);
  }
  if (unique && occurrences) {
    await unique.finish(store);
    await occurrences.finish(store);
    counts.uniqueKeysTaken = unique.judged;
    counts.occurrencesMinted = occurrences.judged;
    counts.unjudged += unique.unjudged + occurrences.unjudged;
    violations.push(...unique.violations, ...occurrences.violations);
  }
  return { ...counts, anyLimit, timelines, violations };
}

/** Limits stored now whose changes the audit log does not hold (declared before declarations were audited): the starts under them go unjudged. */
export async function unrecordedLimits(store: Pick<JobStore, 'concurrencyLimitList' | 'rateLimitList'>, { timelines }: Pick<LimitCheck, 'timelines'>): Promise<number> {
  let count = 0;
  const keyOf = (target: { queue?: string; key?: string }) => (target.queue !== undefined ? `queue:${target.queue}` : `key:${target.key}`);
  for (const [list, known] of [
    [(after?: LimitTarget) => store.concurrencyLimitList({ limit: 1_000, ...(after ? { after } : {}) }), timelines.caps],
    [(after?: LimitTarget) => store.rateLimitList({ limit: 1_000, ...(after ? { after } : {}) }), timelines.rates],
  ] as const) {
    let after: LimitTarget | undefined;
    for (;;) {
      const page: LimitTarget[] = await list(after);
      count += page.filter((limit) => !known.has(keyOf(limit))).length;
      if (page.length < 1_000) break;
      const last = page.at(-1)!;
      after = 'queue' in last && last.queue !== undefined ? { queue: last.queue } : { key: (last as { key: string }).key };
    }
  }
  return count;
}

export type { LimitTimelines };

/** One rate key's recent start times, in time order: a start logged after one stamped later slots in behind it. */
class StartTimes {
  private times: number[] = [];
  private head = 0;

  add(t: number): void {
    const { times } = this;
    let i = times.length;
    while (i > this.head && times[i - 1]! > t) i -= 1;
    times.splice(i, 0, t);
  }

  forgetBefore(t: number): void {
    while (this.head < this.times.length && this.times[this.head]! < t) this.head += 1;
    if (this.head > 1_024 && this.head * 2 > this.times.length) {
      this.times = this.times.slice(this.head);
      this.head = 0;
    }
  }

  /** The start times in `[from, to)`. */
  from(from: number, to: number): number[] {
    const out: number[] = [];
    for (let i = this.firstAfter(from - 1); i < this.times.length && this.times[i]! < to; i += 1) out.push(this.times[i]!);
    return out;
  }

  /** Starts in `(from, to]`. */
  countIn(from: number, to: number): number {
    return this.firstAfter(to) - this.firstAfter(from);
  }

  private firstAfter(t: number): number {
    let lo = this.head;
    let hi = this.times.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.times[mid]! <= t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
