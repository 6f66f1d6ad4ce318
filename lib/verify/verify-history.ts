import { assertInstant, assertPositiveInteger, InvalidArgumentError, showValue, type JobState } from '../core/index.js';
import type { HistoryEntry, JobStore } from '../store/index.js';
import { checkReleases, type Release } from './dependency-order.js';
import { checkJobEntries, VERIFY_RULES, type VerifyViolation } from './history-rules.js';
import { unrecordedLimits } from './limit-timeline.js';
import { checkInLogOrder } from './log-order-pass.js';
import { MAX_WAITING } from './stamp-margins.js';

/** The range and the reads of a {@link verifyHistory} run. */
export interface VerifyOptions {
  /** Only entries at or after this instant; every entry when absent. */
  readonly since?: Date;
  /** Only entries before this instant. When absent, the range reaches now and each job's last entry is also compared with its stored row. */
  readonly until?: Date;
  /** Entries per read of the store, 1 to 10,000. Default 5,000. */
  readonly pageSize?: number;
  /** The most violations the report lists (it counts them all). Default 1,000. */
  readonly maxViolations?: number;
  /** Stops the run before its next read, rejecting with the signal's reason (a node that shuts down). */
  readonly signal?: AbortSignal;
}

/** What {@link verifyHistory} checked and found. */
export interface VerifyReport {
  readonly since: Date | null;
  readonly until: Date | null;
  readonly checked: {
    /** History entries in the range. */
    readonly entries: number;
    /** Jobs with an entry in the range. */
    readonly jobs: number;
    /** Consecutive pairs of a job's entries, each checked against the lifecycle. */
    readonly transitions: number;
    /** Attempts started (entries into `running`). */
    readonly attempts: number;
    /** Ends of a lease judged against the holder and deadline their entries record. */
    readonly leases: number;
    /** Ends of a lease whose entry records no lease (written before schema 26), so not judged. */
    readonly leasesUnrecorded: number;
    /** Releases of a dependant that waited, judged against its parents' histories. */
    readonly releases: number;
    /** Releases that could not be judged: the dependant, its edges or a parent's history is gone. */
    readonly releasesUnjudged: number;
    /** Jobs whose last entry was compared with the stored job (none when `until` is given). */
    readonly jobsCompared: number;
    /** Starts (entries into `running`) judged against a concurrency limit the audit log says was in force. */
    readonly capStarts: number;
    /** Starts judged against a rate limit the audit log says was in force over their window. */
    readonly rateStarts: number;
    /** Starts of jobs no longer stored (deleted by retention or the lean finish), whose queue and key are unknown: judged against no limit. */
    readonly startsUnattributed: number;
    /** Jobs that took a unique key (created, or replayed) in the range, judged against the jobs that held it. */
    readonly uniqueKeysTaken: number;
    /** Jobs a schedule minted (or replayed) in the range, judged against the jobs that were the same occurrence. */
    readonly occurrencesMinted: number;
  };
  /** The rules checked, and what each promises. */
  readonly rules: typeof VERIFY_RULES;
  /** The violations found, the first `maxViolations` of them in job order. */
  readonly violations: readonly VerifyViolation[];
  readonly violationCount: number;
  /** Promises this run could not check, each a sentence saying why. */
  readonly notChecked: readonly string[];
}

type VerifyStore = Pick<
  JobStore,
  'historyScan' | 'jobStatusMany' | 'jobHistory' | 'jobGet' | 'jobEdges' | 'auditList' | 'historyRead' | 'concurrencyLimitList' | 'rateLimitList'
>;

/** Releases judged together: each costs its dependant's row, edges and parents' histories. */
const RELEASE_BATCH = 200;

const STATUS_BATCH = 1_000;

/** The states a job may be deleted in: retention purges them, and the lean finish deletes successes. */
const FINAL: ReadonlySet<JobState> = new Set<JobState>(['succeeded', 'cancelled']);

/** What no version of the checker reads yet: said in every report, so a clean one is not read as more than it is. */
const NOT_YET: readonly string[] = [
  'A job that held a unique key or an occurrence and was deleted since, with its history (retention): the jobs that took the key while it held it are judged against the jobs still stored.',
  'The order of a dependant enqueued after its parents had ended: it never waited, and the enqueue that saw them ended left no entry to judge.',
];

/**
 * Reads a store's history in bounded pages, job by job (`historyScan`), and checks what each job's
 * entries promise: every change of state one the lifecycle allows, attempts counted one at a time,
 * no attempt with two outcomes, nothing moving after it succeeded or was cancelled, and every end
 * of a lease judged against the worker and deadline its entry records. When the range
 * reaches now, each job's last entry is compared with the stored job, a thousand at a time: a job
 * deleted while its history ends other than succeeded or cancelled was lost. It reads a running
 * store without stopping it, and reads a job again before it reports it. It holds one job's
 * entries and a thousand jobs' last entries at a time, so its memory does not grow with the history.
 */
export async function verifyHistory(store: VerifyStore, options: VerifyOptions = {}): Promise<VerifyReport> {
  const { since, until, pageSize, maxViolations } = checkVerifyOptions(options);
  const { signal } = options;
  const violations: VerifyViolation[] = [];
  let violationCount = 0;
  const found = (list: readonly VerifyViolation[]) => {
    violationCount += list.length;
    for (const violation of list) if (violations.length < maxViolations) violations.push(violation);
  };
  const checked = {
    entries: 0,
    jobs: 0,
    transitions: 0,
    attempts: 0,
    leases: 0,
    leasesUnrecorded: 0,
    releases: 0,
    releasesUnjudged: 0,
    jobsCompared: 0,
    capStarts: 0,
    rateStarts: 0,
    startsUnattributed: 0,
    uniqueKeysTaken: 0,
    occurrencesMinted: 0,
  };
  let released: Release[] = [];
  const judgeReleases = async () => {
    const list = released;
    released = [];
    if (list.length === 0) return;
    signal?.throwIfAborted();
    const judged = await checkReleases(store, list);
    checked.releases += judged.judged;
    checked.releasesUnjudged += judged.unjudged;
    found(judged.violations);
  };
  let pending: HistoryEntry[] = [];
  // Whether a stored job has a unique key or was minted, as the comparison reads them; unknown (so assumed)
  // when the range ends before now and no job is compared.
  let keyed = until !== null;

  const compare = async () => {
    const lasts = pending;
    pending = [];
    if (lasts.length === 0) return;
    signal?.throwIfAborted();
    const rows = new Map((await store.jobStatusMany({ jobIds: lasts.map((e) => e.jobId) })).map((row) => [row.id, row]));
    for (const row of rows.values()) if (row.uniqueKey !== null || row.scheduleId !== null) keyed = true;
    for (const last of lasts) {
      const row = rows.get(last.jobId);
      // Retention and the lean finish delete succeeded and cancelled jobs, never another.
      if (row ? row.state === last.state && row.attempt === last.attempt : FINAL.has(last.state)) {
        checked.jobsCompared += 1;
        continue;
      }
      // Read again: a job that moved on since its entries were read, or ended and was deleted with
      // its history, is not a finding. A row and its entry commit together, so a row that differs
      // while its last entry is still the newest is one.
      const [newest] = await store.jobHistory({ jobId: last.jobId, limit: 1 });
      if (newest === undefined || newest.id !== last.id) continue;
      checked.jobsCompared += 1;
      const ends = `${last.state.replace(/_/g, ' ')} (attempt ${last.attempt}, entry ${last.id})`;
      found([
        row
          ? { rule: 'state_mismatch', jobId: last.jobId, entryIds: [last.id], message: `Job ${last.jobId} is stored ${row.state.replace(/_/g, ' ')} (attempt ${row.attempt}), but its history ends ${ends}.` }
          : { rule: 'lost_job', jobId: last.jobId, entryIds: [last.id], message: `Job ${last.jobId} is no longer stored, but its history ends ${ends}, and only succeeded or cancelled jobs are ever deleted.` },
      ]);
    }
  };

  // A job's stretch of the range: from its first entry at or after `since` to its last before
  // `until`, in entry order, with the entry before it as context: a change is judged from the
  // state it left, so a lease taken before `since` and ended after it is judged in this range.
  // Entries are stamped as their statements start, so one that waited for a row lock can carry an
  // earlier time than the entry before it; cutting by id keeps each step of the stretch a real step.
  const stretch = (entries: readonly HistoryEntry[]): { entries: HistoryEntry[]; context: number } | null => {
    const from = since === null ? 0 : entries.findIndex((e) => e.at >= since);
    if (from < 0) return null;
    const found = until === null ? -1 : entries.findIndex((e, i) => i >= from && e.at >= until);
    const to = found < 0 ? entries.length : found;
    if (to === from) return null;
    const context = from > 0 ? 1 : 0;
    return { entries: entries.slice(from - context, to), context };
  };

  const finish = async (entries: HistoryEntry[]) => {
    let part = stretch(entries);
    if (part === null) return;
    let check = checkJobEntries(part.entries, part.context);
    if (check.violations.length > 0) {
      // Read the job whole, in one statement, and judge that: the history trim may have cut the
      // job's oldest entries between two pages of the scan, leaving a gap no store ever wrote.
      part = stretch(await store.jobHistory({ jobId: part.entries[0]!.jobId }));
      if (part === null) return;
      check = checkJobEntries(part.entries, part.context);
    }
    const inRange = part.entries;
    // A dependant that waited and was released in the range: judged against its parents, a batch at a time.
    for (let i = 1; i < inRange.length; i++) {
      if (inRange[i - 1]!.state === 'awaiting_parents' && inRange[i]!.state === 'scheduled') released.push({ jobId: inRange[i]!.jobId, entry: inRange[i]! });
    }
    if (released.length >= RELEASE_BATCH) await judgeReleases();
    checked.jobs += 1;
    checked.entries += inRange.length - part.context;
    checked.transitions += check.transitions;
    checked.attempts += check.attempts;
    checked.leases += check.leasesJudged;
    checked.leasesUnrecorded += check.leasesUnknown;
    found(check.violations);
    if (until === null) {
      pending.push(inRange.at(-1)!);
      if (pending.length >= STATUS_BATCH) await compare();
    }
  };

  // One job's entries at a time, whole, whatever the range: the stretch is cut from them.
  let current: HistoryEntry[] = [];
  let after: HistoryEntry | undefined;
  for (;;) {
    signal?.throwIfAborted();
    const page = await store.historyScan({ limit: pageSize, ...(after ? { after: { jobId: after.jobId, id: after.id } } : {}) });
    for (const entry of page) {
      if (current.length > 0 && entry.jobId !== current[0]!.jobId) {
        await finish(current);
        current = [];
      }
      current.push(entry);
    }
    if (page.length < pageSize) break;
    after = page.at(-1);
  }
  await finish(current);
  await compare();
  await judgeReleases();
  const limits = await checkInLogOrder(store, { since, until, pageSize }, keyed, signal);
  checked.capStarts = limits.capStarts;
  checked.rateStarts = limits.rateStarts;
  checked.startsUnattributed = limits.startsUnattributed;
  checked.uniqueKeysTaken = limits.uniqueKeysTaken;
  checked.occurrencesMinted = limits.occurrencesMinted;
  found(limits.violations);
  const unrecorded = checked.entries === 0 ? 0 : await unrecordedLimits(store, limits.timelines);

  const notChecked = [
    ...(checked.entries === 0 ? ['Every rule: the history holds no entry in this range. A store with historyPolicy "off" records none, so nothing could be checked.'] : []),
    ...(checked.leasesUnrecorded > 0
      ? [`The lease of ${checked.leasesUnrecorded} ended ${checked.leasesUnrecorded === 1 ? 'attempt' : 'attempts'}: ${checked.leasesUnrecorded === 1 ? 'its entry records' : 'their entries record'} no worker or lease deadline (written before schema 26, or by an older node).`]
      : []),
    ...(checked.startsUnattributed > 0
      ? [`Limits for ${checked.startsUnattributed} ${checked.startsUnattributed === 1 ? 'start' : 'starts'} of jobs no longer stored: their queue and key went with them.`]
      : []),
    ...(limits.timelines.unreadable > 0
      ? [`${limits.timelines.unreadable} audit ${limits.timelines.unreadable === 1 ? 'entry' : 'entries'} of a limit change ${limits.timelines.unreadable === 1 ? 'holds' : 'hold'} a detail no store writes: the limit is not judged from ${limits.timelines.unreadable === 1 ? 'it' : 'each'} until its next change.`]
      : []),
    ...(limits.unjudged > 0
      ? [`${limits.unjudged} ${limits.unjudged === 1 ? 'start or taking of a key that looked' : 'starts or takings of a key that looked'} like breaking a limit or a key were not judged: ${MAX_WAITING.toLocaleString('en-US')} others already waited for the jobs they counted to end (a job whose lease lapsed with no entry to end it keeps its key's claims waiting).`]
      : []),
    ...(unrecorded > 0
      ? [`${unrecorded} ${unrecorded === 1 ? 'limit has' : 'limits have'} no change in the audit log (declared before limit declarations were audited), so the starts under ${unrecorded === 1 ? 'it were' : 'them were'} not judged.`]
      : []),
    ...NOT_YET,
  ];
  return { since, until, checked, rules: VERIFY_RULES, violations, violationCount, notChecked };
}

/** Checks a run's options before anything is read: instants for the range, in order, and whole numbers for the sizes. */
function checkVerifyOptions(options: VerifyOptions) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new InvalidArgumentError(`verifyHistory takes options like { since?, until?, pageSize?, maxViolations? }, got ${showValue(options)}.`, 'options');
  }
  const since = options.since === undefined ? null : new Date(assertInstant(options.since, 'since'));
  const until = options.until === undefined ? null : new Date(assertInstant(options.until, 'until'));
  if (since !== null && until !== null && until <= since) throw new InvalidArgumentError('until must come after since.', 'until');
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal)) throw new InvalidArgumentError(`signal must be an AbortSignal, got ${showValue(options.signal)}.`, 'signal');
  return {
    since,
    until,
    pageSize: options.pageSize === undefined ? 5_000 : assertPositiveInteger(options.pageSize, 'pageSize', 10_000),
    maxViolations: options.maxViolations === undefined ? 1_000 : assertPositiveInteger(options.maxViolations, 'maxViolations', 100_000),
  };
}
