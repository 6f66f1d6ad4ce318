import { rateWindowStatus } from '../rate-window.js';
import type { DriverAuditListParams, DriverParentOutputParams } from '../checked/store-driver.js';
import { isDeadLetterState, type JobRecord, type JobState } from '../../core/index.js';
import { limitOf, rateLimitOf } from '../checked/effect-params.js';
import { cutPage, LIST_SCAN_LIMIT, matchesFilters, type DriverListParams } from '../job-page.js';
import { toJob, toJobStatus } from '../job-row.js';
import type {
  AuditRecord,
  BlockedSequence,
  ConcurrencyLimit,
  RateLimit,
  RateLimitStatus,
  HistoryEntry,
  JobCountTotals,
  JobPage,
  JobStats,
  JobStatus,
  ParentOutput,
  QueueSummary,
} from '../job-store.types.js';
import type { DriverGroup, DriverGroupListParams, DriverHistoryParams, DriverHistoryScanParams, DriverLimitListParams, DriverQueueListParams } from '../operator-reads.js';
import { queueSummaries, type QueueCountRow } from '../queue-summary.js';
import { toSchedule, type Schedule } from '../schedules/index.js';
import { schedulesInOrder } from './memory-schedule-tx.js';
import type { MemoryState } from './memory-tables.js';

/** A limits map's entries in key order (code units, as SQLite and PostgreSQL's C order compare), the page `params` asks for. */
function inKeyOrder<V>(limits: ReadonlyMap<string, V>, { limit, after }: DriverLimitListParams): [string, V][] {
  const sorted = [...limits].filter(([key]) => key > after).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return limit === null ? sorted : sorted.slice(0, limit);
}

/** The reads: listings for operators, a dependant's view of its ancestors, schedules. */
export class MemoryReads {
  constructor(private readonly state: MemoryState) {}

  jobGet({ jobId }: { readonly jobId: string }): JobRecord | null {
    const row = this.state.tables.jobs.get(jobId);
    return row ? toJob(row) : null;
  }

  jobStatusMany({ jobIds }: { readonly jobIds: readonly string[] }): JobStatus[] {
    return jobIds.flatMap((id) => {
      const row = this.state.tables.jobs.get(id);
      if (!row) return [];
      const { queue, concurrencyKey, uniqueKey, scheduleId, scheduledFor, state, attempt, maxAttempts, lastError, output, finishedAt } = row;
      return [toJobStatus({ id, queue, concurrency_key: concurrencyKey, unique_key: uniqueKey ?? null, schedule_id: scheduleId, scheduled_for: scheduledFor, state, attempt, max_attempts: maxAttempts, last_error: lastError, output, finished_at: finishedAt })];
    });
  }

  /**
   * A page as the SQL stores cut it: the first {@link LIST_SCAN_LIMIT} jobs of the state (or of
   * all) past the cursor, in the listing's order, are examined, and the filters applied to those.
   * Sorting the whole map is fine for a store that lives in one process's memory; the page
   * boundaries are what must agree.
   */
  jobListPage(params: DriverListParams): JobPage | null {
    const { jobs } = this.state.tables;
    const newest = params.order === 'newest';
    let bound = newest ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY;
    if (params.cursor !== undefined) {
      const cursor = jobs.get(params.cursor);
      if (!cursor) return null;
      bound = cursor.seq;
    }
    const examined = [...jobs.values()]
      .filter((row) => (newest ? row.seq < bound : row.seq > bound) && (params.state === undefined || row.state === params.state))
      .sort((a, b) => (newest ? b.seq - a.seq : a.seq - b.seq))
      .slice(0, LIST_SCAN_LIMIT);
    const page = cutPage(
      examined.map((row, i) => ({ row, id: row.id, position: i + 1, matches: matchesFilters(row, params) })),
      params.limit,
    );
    return { jobs: page.rows.map(toJob), next: page.next };
  }

  jobListDeadLettered({ limit }: { readonly limit: number }): JobRecord[] {
    return [...this.state.tables.jobs.values()]
      .filter((row) => row.state === 'dead_lettered')
      .sort((a, b) => b.finishedAt! - a.finishedAt! || b.seq - a.seq)
      .slice(0, limit)
      .map(toJob);
  }

  jobListBlockedSequences({ limit, after }: { readonly limit: number; readonly after: string | null }): BlockedSequence[] {
    const { jobs, children } = this.state.tables;
    const blocked: BlockedSequence[] = [];
    for (const row of jobs.values()) {
      if (row.sequenceKey === null || !isDeadLetterState(row.state) || (after !== null && compareText(row.sequenceKey, after) <= 0)) continue;
      // The job behind it waits, or was cancelled before its turn and holds the line for the next.
      const next = (children.get(row.id) ?? []).find((edge) => !edge.settled && edge.sequence === 'block');
      if (next) blocked.push({ key: row.sequenceKey, job: toJob(row), nextJobId: next.childId });
    }
    // A row per key: of two failed jobs holding one key, the one that failed first.
    blocked.sort((a, b) => compareText(a.key, b.key) || a.job.finishedAt!.getTime() - b.job.finishedAt!.getTime() || compareText(a.job.id, b.job.id));
    return blocked.filter((entry, i) => i === 0 || entry.key !== blocked[i - 1]!.key).slice(0, limit);
  }

  jobListGroups({ limit, after, countScan }: DriverGroupListParams): DriverGroup[] {
    const now = this.state.clock.now();
    const groups = new Map<string, { due: number; later: number; oldest: number | null }>();
    for (const row of this.state.tables.jobs.values()) {
      if (row.groupKey === null || row.state !== 'scheduled' || (after !== null && compareText(row.groupKey, after) <= 0)) continue;
      const group = groups.get(row.groupKey) ?? { due: 0, later: 0, oldest: null };
      if (row.runAt <= now) {
        group.due += 1;
        group.oldest = group.oldest === null ? row.runAt : Math.min(group.oldest, row.runAt);
      } else {
        group.later += 1;
      }
      groups.set(row.groupKey, group);
    }
    return [...groups]
      .sort(([a], [b]) => compareText(a, b))
      .slice(0, limit)
      .map(([group, { due, later, oldest }]) => ({
        group,
        due: Math.min(due, countScan),
        later: Math.min(later, countScan),
        oldestDueAt: oldest === null ? null : new Date(oldest),
        concurrencyMax: this.state.tables.concurrencyLimits.get(`key:${group}`) ?? null,
      }));
  }

  historyScan({ limit, afterJobId, afterId }: DriverHistoryScanParams): HistoryEntry[] {
    const after = (entry: HistoryEntry) => afterJobId === null || entry.jobId > afterJobId || (entry.jobId === afterJobId && entry.id > afterId);
    return this.state.tables.history
      .filter(after)
      .sort((a, b) => (a.jobId < b.jobId ? -1 : a.jobId > b.jobId ? 1 : a.id - b.id))
      .slice(0, limit);
  }

  jobHistory({ jobId, limit, before }: DriverHistoryParams): HistoryEntry[] {
    const entries = this.state.tables.history.filter((entry) => entry.jobId === jobId && (before === null || entry.id < before));
    return limit === null ? entries : entries.slice(-limit);
  }

  // The counts are computed from the rows on each read, not kept: this store holds what fits in one
  // process, and a count that is never stored can never drift from the rows. jobCountsFold has
  // nothing to do here.
  jobStats(): JobStats {
    const now = this.state.clock.now();
    const counts = new Map<string, { queue: string; state: JobState; count: number }>();
    let oldestDueAt: number | null = null;
    for (const row of this.state.tables.jobs.values()) {
      const key = `${row.queue}\u0000${row.state}`;
      const entry = counts.get(key) ?? { queue: row.queue, state: row.state, count: 0 };
      entry.count += 1;
      counts.set(key, entry);
      if (row.state === 'scheduled' && row.runAt <= now && (oldestDueAt === null || row.runAt < oldestDueAt)) oldestDueAt = row.runAt;
    }
    return {
      counts: [...counts.values()].sort((a, b) => a.queue.localeCompare(b.queue) || a.state.localeCompare(b.state)),
      oldestDueAt: oldestDueAt === null ? null : new Date(oldestDueAt),
      now: new Date(now),
    };
  }

  queueList(params: DriverQueueListParams): QueueSummary[] {
    const { knownQueues, pausedQueues, jobs } = this.state.tables;
    const rows: QueueCountRow[] = [...knownQueues, ...pausedQueues].map((name) => ({ name, paused: pausedQueues.has(name), state: null, count: null }));
    for (const row of jobs.values()) rows.push({ name: row.queue, paused: false, state: row.state, count: 1 });
    const all = queueSummaries(rows);
    if (params.kind === 'all') return all;
    if (params.kind === 'named') return all.filter((queue) => params.queues.includes(queue.name));
    return all.filter((queue) => queue.name > params.after).slice(0, params.limit);
  }

  jobCountTotals(): JobCountTotals {
    const counts: Partial<Record<JobState, number>> = {};
    for (const row of this.state.tables.jobs.values()) counts[row.state] = (counts[row.state] ?? 0) + 1;
    return { counts, queues: this.queueList({ kind: 'all' }).length };
  }

  concurrencyLimitList(params: DriverLimitListParams): ConcurrencyLimit[] {
    return inKeyOrder(this.state.tables.concurrencyLimits, params).map(([key, max]) => limitOf(key, max));
  }

  rateLimitList(params: DriverLimitListParams): RateLimit[] {
    return inKeyOrder(this.state.tables.rateLimits, params).map(([key, w]) => rateLimitOf(key, w.max, w.perMs));
  }

  rateLimitStatus({ key }: { readonly key: string }): RateLimitStatus | null {
    const window = this.state.tables.rateLimits.get(key);
    if (!window) return null;
    const now = this.state.clock.now();
    const { startsInWindow, fullUntil } = rateWindowStatus(window, now);
    return { max: window.max, perMs: window.perMs, startsInWindow, fullUntil: fullUntil === null ? null : new Date(fullUntil), now: new Date(now) };
  }

  auditList({ limit, action, before }: DriverAuditListParams): AuditRecord[] {
    const log = this.state.tables.auditLog;
    return log.filter((entry) => (action === null || entry.action === action) && (before === null || entry.id < before)).slice(-limit).reverse();
  }

  /** Walks the job's ancestors (not only its parents) looking for `ancestorId`. */
  jobParentOutput({ jobId, ancestorId }: DriverParentOutputParams): ParentOutput {
    const { parents, jobs } = this.state.tables;
    const seen = new Set<string>();
    const stack = [...(parents.get(jobId) ?? [])];
    while (stack.length > 0) {
      const next = stack.pop()!;
      if (next === ancestorId) {
        const row = jobs.get(ancestorId);
        return row && row.output !== null ? { found: true, output: JSON.parse(row.output) as unknown } : { found: false, output: undefined };
      }
      if (seen.has(next)) continue;
      seen.add(next);
      stack.push(...(parents.get(next) ?? []));
    }
    return { found: false, output: undefined };
  }

  scheduleGet({ scheduleId }: { readonly scheduleId: string }): Schedule | null {
    const row = this.state.tables.schedules.get(scheduleId);
    return row ? toSchedule(row) : null;
  }

  scheduleList({ limit, after }: { readonly limit: number; readonly after: string | null }): Schedule[] | null {
    const all = schedulesInOrder(this.state.tables.schedules);
    const from = after === null ? 0 : all.findIndex((row) => row.id === after) + 1;
    if (from === 0 && after !== null) return null;
    return all.slice(from, from + limit).map(toSchedule);
  }
}

/** Text in code-unit order, as this store compares keys. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
