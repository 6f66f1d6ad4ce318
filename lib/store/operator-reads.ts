import { storedTraceContext, type DependencyMode, type JobState } from '../core/index.js';
import { GROUP_COUNT_CAP, type EdgeJob, type JobThroughput, type LimitHolder, type ObserverStatus, type ThroughputBucket, type WaitingGroup } from './job-store.types.js';

/** Default and most edges {@link OperatorStore.jobEdges} returns per side. */
export const DEFAULT_EDGE_LIMIT = 100;
/** Default holders {@link OperatorStore.limitHolders} returns. */
export const DEFAULT_HOLDER_LIMIT = 50;
/**
 * The most due jobs one {@link OperatorStore.queueOldestDue} read examines, oldest first. About a
 * heap page each on PostgreSQL (the claim index does not carry the queue), like a listing page.
 */
export const DUE_SCAN_LIMIT = 10_000;
/**
 * The most finished jobs one {@link OperatorStore.jobThroughput} read takes from each finished-jobs
 * index (succeeded and cancelled; dead-lettered), newest first. Each costs a heap visit for its
 * state and queue; 50,000 keeps the read in the tens of milliseconds however many jobs are retained.
 */
export const THROUGHPUT_SCAN_LIMIT = 50_000;
/** The most buckets one throughput read returns (a day of minutes). */
export const MAX_THROUGHPUT_BUCKETS = 1_440;
/** Default observers {@link OperatorStore.observerList} returns. */
export const DEFAULT_OBSERVER_LIST_LIMIT = 100;
/**
 * The most history entries one {@link OperatorStore.observerList} read counts after each observer's
 * cursor, in order through the log's key (on PostgreSQL its columns are all the count needs), so
 * 1,000 observers each 10,000 behind stay a bounded read.
 */
export const OBSERVER_LAG_LIMIT = 10_000;
/** The narrowest and widest throughput bucket. */
export const MIN_BUCKET_MS = 1_000;
export const MAX_BUCKET_MS = 86_400_000;

/** A queue listing as a driver receives it: every queue, a page of names after `after` ('' for the first), or the named queues (sorted, distinct). */
export type DriverQueueListParams =
  | { readonly kind: 'all' }
  | { readonly kind: 'page'; readonly limit: number; readonly after: string }
  | { readonly kind: 'named'; readonly queues: readonly string[] };

/** A history read as a driver receives it: every entry (limit null), or the newest `limit` before entry `before` (null: the newest). */
export interface DriverHistoryParams {
  readonly jobId: string;
  readonly limit: number | null;
  readonly before: number | null;
}

/** A history scan as a driver receives it: up to `limit` entries after (`afterJobId`, `afterId`), or from the first when `afterJobId` is null. */
export interface DriverHistoryScanParams {
  readonly limit: number;
  readonly afterJobId: string | null;
  readonly afterId: number;
}

/** The default and the most entries one {@link OperatorStore.historyScan} page holds. */
export const DEFAULT_HISTORY_SCAN = 1_000;
export const MAX_HISTORY_SCAN = 10_000;

/** A limit listing as a driver receives it: every limit (limit null), or `limit` of them whose storage key sorts after `after` ('' for the first). */
export interface DriverLimitListParams {
  readonly limit: number | null;
  readonly after: string;
}

/** A job-edges read as a driver receives it: a canonical id and the per-side limit. */
export interface DriverEdgesParams {
  readonly id: string;
  readonly limit: number;
}

/** One edge as a driver reads it: the other job, the stored flag, and what decides satisfaction. */
export interface EdgeRow {
  readonly id: string;
  readonly name: string;
  readonly queue: string;
  readonly state: JobState;
  readonly settled: boolean;
  /** The parent's state: the other job's for a parent edge, the job's own for a dependant edge. */
  readonly parentState: JobState;
  /** The dependant's mode: the job's own for a parent edge, the other job's for a dependant edge. */
  readonly mode: DependencyMode | null;
  /** The edge's sequence mode when it is a sequence's order (the dependant runs after the parent), else null. */
  readonly sequence: 'block' | 'continue' | null;
  /** The other job's stored trace context (job-row.ts). */
  readonly traceparent: string | null;
  readonly tracestate: string | null;
}

/** What a driver returns for one job's edges: up to `limit + 1` rows per side, so the cut can tell there were more. */
export interface DriverEdges {
  readonly parents: readonly EdgeRow[];
  readonly dependants: readonly EdgeRow[];
}

/** Holders of one limit, as a driver receives the request: the limit's storage key and how many. */
export interface DriverHoldersParams {
  readonly key: string;
  readonly limit: number;
}

/** What a driver returns for a limit's holders: the cap, and up to `limit + 1` holders in order. */
export interface DriverHolders {
  readonly max: number | null;
  readonly holders: readonly LimitHolder[];
}

/** The oldest-due read as a driver receives it: the queues asked (null for any) and the scan bound. */
export interface DriverOldestDueParams {
  readonly queues: readonly string[] | null;
  readonly scan: number;
}

/** What a driver found: per queue the oldest due `runAt` and the due jobs among those examined, how many it examined and where it stopped. */
export interface DriverOldestDue {
  readonly oldest: ReadonlyMap<string, number>;
  readonly due: ReadonlyMap<string, number>;
  readonly examined: number;
  /** The `runAt` of the last job examined, or null when none was. */
  readonly last: number | null;
  readonly now: number;
}

/** The throughput read as a driver receives it: checked, in epoch milliseconds. */
export interface DriverThroughputParams {
  readonly since: number;
  readonly bucketMs: number;
  readonly queue: string | null;
  readonly scan: number;
}

/** The two finished-jobs indexes a throughput read takes rows from. */
export type ThroughputSource = 'done' | 'dead';

/** Finished jobs counted per bucket and end state, and what each source read. */
export interface DriverThroughput {
  /** Bucket numbers count from the window's first bucket (see {@link throughputWindow}). */
  readonly counts: readonly { readonly bucket: number; readonly state: JobState; readonly count: number }[];
  /** Per source: the rows read (matching the queue or not) and the oldest `finishedAt` among them. */
  readonly read: Readonly<Record<ThroughputSource, { readonly rows: number; readonly oldest: number | null }>>;
  readonly now: number;
}

/** An observer listing as a driver receives it: how many cursors, and how far to count each one's lag. */
export interface DriverObserverListParams {
  readonly limit: number;
  /** Count at most this many entries after each cursor (one more than the reported cap, so the cut can tell). */
  readonly lagScan: number;
}

/**
 * One cursor as a driver reads it: the contract's fields, with the lease already judged live or
 * not by the store's clock, and `lag` counted up to `lagScan`.
 */
export type DriverObserverStatus = Omit<ObserverStatus, 'lagEntries' | 'lagCapped'> & { readonly lag: number };

/** A driver's cursor as the operator sees it: the lag cut to `cap`, and whether there was more. */
export function toObserverStatus(row: DriverObserverStatus, cap: number): ObserverStatus {
  const { lag, ...rest } = row;
  return { ...rest, lagEntries: Math.min(lag, cap), lagCapped: lag > cap };
}

/** The edge as an operator sees it, with whether it released its share of the latch. */
export function toEdgeJob(row: EdgeRow): EdgeJob {
  // A sequence edge never cancels: once settled it released its share, however the parent ended.
  const satisfied = row.settled && (row.parentState === 'succeeded' || row.sequence !== null || row.mode === 'on_any_terminal');
  return { id: row.id, name: row.name, queue: row.queue, state: row.state, settled: row.settled, satisfied, sequence: row.sequence, traceContext: storedTraceContext(row.traceparent, row.tracestate) };
}

/** Cuts a driver's `limit + 1` rows to `limit`, sorted by id, and says whether any were left over. */
export function cutEdges(rows: readonly EdgeRow[], limit: number): { jobs: EdgeJob[]; truncated: boolean } {
  const jobs = rows.slice(0, limit).map(toEdgeJob).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { jobs, truncated: rows.length > limit };
}

/**
 * The window a throughput read covers at `now`: its first bucket's start (`since`, or later when
 * the window holds more than {@link MAX_THROUGHPUT_BUCKETS} buckets, keeping the newest) and how
 * many buckets, up to the one that holds `now`. Every store counts from this start, so they agree
 * on which bucket a job falls in.
 */
export function throughputWindow(since: number, bucketMs: number, now: number): { from: number; buckets: number } {
  if (now < since) return { from: since, buckets: 0 };
  const total = Math.floor((now - since) / bucketMs) + 1;
  const skipped = Math.max(0, total - MAX_THROUGHPUT_BUCKETS);
  return { from: since + skipped * bucketMs, buckets: total - skipped };
}

/** Builds the contract's result from a driver's counts, filling the empty buckets. */
export function throughputResult(params: DriverThroughputParams, found: DriverThroughput): JobThroughput {
  const { from, buckets: size } = throughputWindow(params.since, params.bucketMs, found.now);
  const buckets: ThroughputBucket[] = Array.from({ length: size }, (_, i) => ({
    start: new Date(from + i * params.bucketMs),
    succeeded: 0,
    deadLettered: 0,
    cancelled: 0,
  }));
  for (const { bucket, state, count } of found.counts) {
    const target = buckets[bucket] as { succeeded: number; deadLettered: number; cancelled: number } | undefined;
    if (target === undefined) continue;
    if (state === 'succeeded') target.succeeded += count;
    else if (state === 'dead_lettered') target.deadLettered += count;
    else if (state === 'cancelled') target.cancelled += count;
  }
  // A source that filled its cap stopped before the window's start; the later of the two stops bounds what is complete.
  const stops = (['done', 'dead'] as const)
    .map((source) => found.read[source])
    .filter((read) => read.rows >= params.scan && read.oldest !== null)
    .map((read) => read.oldest!);
  return { buckets, partialUntil: stops.length === 0 ? null : new Date(Math.max(...stops)), now: new Date(found.now) };
}

/**
 * A job id prefix in the ids' own spelling (lower-case hex, hyphens where a UUID has them), or
 * null when `text` cannot start a UUID. Accepts hex digits with or without those hyphens, in any
 * case, and a trailing hyphen after a complete group.
 */
export function canonicalIdPrefix(text: string): string | null {
  const lower = text.toLowerCase();
  const hex = lower.replaceAll('-', '');
  if (!/^[0-9a-f]{1,32}$/.test(hex)) return null;
  let canonical = '';
  for (let i = 0; i < hex.length; i++) {
    if (i === 8 || i === 12 || i === 16 || i === 20) canonical += '-';
    canonical += hex[i];
  }
  const groupEnds = [8, 12, 16, 20].includes(hex.length);
  return lower === hex || lower === canonical || (groupEnds && lower === `${canonical}-`) ? canonical : null;
}

/**
 * A group as a driver reads it ({@link OperatorStore.jobListGroups}): its due and later jobs each
 * counted up to one past {@link GROUP_COUNT_CAP}, so the cut can tell whether there were more.
 */
export type DriverGroup = Omit<WaitingGroup, 'dueCapped' | 'laterCapped'>;

/** A group listing as a driver receives it: the page, and how far to count each group's jobs. */
export interface DriverGroupListParams {
  readonly limit: number;
  readonly after: string | null;
  readonly countScan: number;
}

/** How far a driver counts a group's waiting jobs of each kind: one past the reported cap. */
export const GROUP_COUNT_SCAN = GROUP_COUNT_CAP + 1;

/** A driver's group as the operator sees it: each count cut to the cap, and whether there was more. */
export function toWaitingGroup(row: DriverGroup): WaitingGroup {
  return {
    group: row.group,
    due: Math.min(row.due, GROUP_COUNT_CAP),
    dueCapped: row.due > GROUP_COUNT_CAP,
    later: Math.min(row.later, GROUP_COUNT_CAP),
    laterCapped: row.later > GROUP_COUNT_CAP,
    oldestDueAt: row.oldestDueAt,
    concurrencyMax: row.concurrencyMax,
  };
}
