import { isTerminalState } from '../core/index.js';
import type { HistoryEntry, JobStore } from '../store/index.js';
import { limitKeysOf } from '../store/limit-room.js';
import type { VerifyViolation } from './history-rules.js';
import { LimitWatch } from './limit-rules.js';
import { readLimitTimelines, type LimitTimelines } from './limit-timeline.js';
import { CONCURRENT_MARGINS, SERIAL_MARGINS } from './stamp-margins.js';
import { KeyWatch, OCCURRENCES, UNIQUE_KEYS } from './unique-keys.js';

type PassStore = Pick<JobStore, 'auditList' | 'historyRead' | 'jobStatusMany' | 'jobGet'> & { readonly capabilities?: Pick<JobStore['capabilities'], 'serialWrites'> };

/** What the pass in log order counted and found. */
export interface LogOrderCheck {
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
  /** Starts, and takings of a key, that looked like breaking a promise while MAX_WAITING others waited to be judged: not judged. */
  readonly unjudged: number;
  /** The limits' histories, as the audit log records them. */
  readonly timelines: LimitTimelines;
  readonly violations: VerifyViolation[];
}

/**
 * The second pass of verify: the history once more, in log order (the order observers get it),
 * for the promises that span jobs. The audit log's limits are judged at each start
 * (limit-rules.ts), and each unique key and occurrence at each taking (unique-keys.ts). Each page
 * reads the rows of the jobs that start or may take a key, a thousand at a time. It reads no
 * history when the log records no limit and `followKeys` says no stored job has a key or was
 * minted.
 */
export async function checkInLogOrder(
  store: PassStore,
  range: { readonly since: Date | null; readonly until: Date | null; readonly pageSize: number },
  followKeys: boolean,
  signal?: AbortSignal,
): Promise<LogOrderCheck> {
  const timelines = await readLimitTimelines(store, signal);
  const margin = store.capabilities?.serialWrites === true ? SERIAL_MARGINS : CONCURRENT_MARGINS;
  const inRange = (entry: HistoryEntry) => (range.since === null || entry.at >= range.since) && (range.until === null || entry.at < range.until);
  const limits = timelines.caps.size > 0 || timelines.rates.size > 0 ? new LimitWatch(timelines, margin, inRange) : null;
  const unique = followKeys ? new KeyWatch(UNIQUE_KEYS, margin.overlapMs, inRange) : null;
  const occurrences = followKeys ? new KeyWatch(OCCURRENCES, margin.overlapMs, inRange) : null;

  // A job's row is read when it starts (its limits), and when it may take a key it is not known to hold.
  const wanted = (e: HistoryEntry) =>
    (limits !== null && e.state === 'running') || (unique !== null && !isTerminalState(e.state) && !unique.holds(e.jobId) && !occurrences!.holds(e.jobId));
  let after: string | undefined;
  while (limits || unique) {
    signal?.throwIfAborted();
    const page = await store.historyRead({ limit: range.pageSize, ...(after === undefined ? {} : { after }) });
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
      limits?.see(entry, keysOf.get(entry.jobId));
    }
    if (page.length < range.pageSize) break;
    after = page.at(-1)!.position;
  }
  await limits?.finish(store);
  await unique?.finish(store);
  await occurrences?.finish(store);
  return {
    capStarts: limits?.capStarts ?? 0,
    rateStarts: limits?.rateStarts ?? 0,
    startsUnattributed: limits?.unattributed ?? 0,
    uniqueKeysTaken: unique?.judged ?? 0,
    occurrencesMinted: occurrences?.judged ?? 0,
    unjudged: (limits?.unjudged ?? 0) + (unique?.unjudged ?? 0) + (occurrences?.unjudged ?? 0),
    timelines,
    violations: [...(limits?.violations ?? []), ...(unique?.violations ?? []), ...(occurrences?.violations ?? [])],
  };
}
