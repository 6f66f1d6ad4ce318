import type { Rate } from '../store/enqueue-input.types.js';
import { limitKey, type AuditRecord, type JobStore, type LimitTarget, type OperatorStore } from '../store/index.js';

/** A limit's value from one audited change on: a number or rate, or null where it was removed. */
interface Change<T> {
  readonly at: number;
  readonly value: T | null;
}

/** What one key's limit was at each moment, as the audit log recorded its changes, oldest first. */
export class LimitTimeline<T> {
  private readonly changes: Change<T>[] = [];

  add(change: Change<T>): void {
    this.changes.push(change);
  }

  /**
   * The values in force at some moment of `[from, to]`, or null when any moment of it had no limit
   * or one the log does not know (before its first recorded change). A claim is judged against the
   * values around its stamp: a change and a claim that met it are stamped as their statements
   * started, so either may carry the other's side of the boundary.
   */
  valuesDuring(from: number, to: number): T[] | null {
    const { changes } = this;
    if (changes.length === 0 || changes[0]!.at > from) return null;
    let i = 0;
    while (i + 1 < changes.length && changes[i + 1]!.at <= from) i += 1;
    const values: T[] = [];
    for (; i < changes.length && changes[i]!.at <= to; i += 1) {
      const value = changes[i]!.value;
      if (value === null) return null;
      values.push(value);
    }
    return values;
  }

  /**
   * The run of changes with a limit in force that covers `to`: when it began (the change that set
   * the limit where there was none, or the first one the log knows), and the values in force at
   * some moment of `[from, to]` within it. Null when no limit was in force at `to`.
   */
  runAt(from: number, to: number): { since: number; values: T[] } | null {
    const { changes } = this;
    let last = -1;
    while (last + 1 < changes.length && changes[last + 1]!.at <= to) last += 1;
    if (last < 0 || changes[last]!.value === null) return null;
    let first = last;
    while (first > 0 && changes[first - 1]!.value !== null) first -= 1;
    let i = first;
    while (i < last && changes[i + 1]!.at <= from) i += 1;
    return { since: changes[first]!.at, values: changes.slice(i, last + 1).map((change) => change.value!) };
  }
}

/** The concurrency and rate limits' histories, per limit key (`queue:mail`, `key:tenant-a`). */
export interface LimitTimelines {
  readonly caps: ReadonlyMap<string, LimitTimeline<number>>;
  readonly rates: ReadonlyMap<string, LimitTimeline<Rate>>;
  /** Audit entries of a limit change whose detail is not one a store writes (a hand edit): the limit is unknown from each on, until its next change. */
  readonly unreadable: number;
}

const PAGE = 1_000;

/**
 * Reads every audited change of a concurrency or rate limit (set by an operator or at boot, or
 * declared by an enqueue), a page at a time from the newest, and orders each key's changes in time. Its memory grows with the number of changes, not with the history.
 */
export async function readLimitTimelines(store: Pick<OperatorStore, 'auditList'>, signal?: AbortSignal): Promise<LimitTimelines> {
  let unreadable = 0;
  const read = async <T>(actions: readonly string[], valueOf: (detail: unknown) => T | null | undefined) => {
    const entries: AuditRecord[] = [];
    for (const action of actions) {
      let before: number | undefined;
      for (;;) {
        signal?.throwIfAborted();
        const page = await store.auditList({ action, limit: PAGE, ...(before === undefined ? {} : { before }) });
        entries.push(...page);
        if (page.length < PAGE) break;
        before = page.at(-1)!.id;
      }
    }
    // In time order, ties in log order: a change takes effect as it commits, and the margin a
    // claim is judged with covers stamps that disagree with the log's order by a little.
    entries.sort((a, b) => a.at.getTime() - b.at.getTime() || a.id - b.id);
    const timelines = new Map<string, LimitTimeline<T>>();
    for (const entry of entries) {
      // A detail no store writes (a hand edit) leaves the limit unknown from it on: judged by nothing.
      let value = valueOf(entry.detail);
      if (value === undefined) {
        unreadable += 1;
        value = null;
      }
      let timeline = timelines.get(entry.target);
      if (!timeline) timelines.set(entry.target, (timeline = new LimitTimeline<T>()));
      timeline.add({ at: entry.at.getTime(), value: value as T | null });
    }
    return timelines;
  };
  const caps = await read(['limit.set', 'limit.declare'], (detail) => {
    const max = (detail as { max?: unknown } | null)?.max;
    return max === null ? null : Number.isInteger(max) && (max as number) > 0 ? (max as number) : undefined;
  });
  const rates = await read(['rate_limit.set', 'rate_limit.declare'], (detail) => {
    const rate = (detail as { rate?: unknown } | null)?.rate as { max?: unknown; perMs?: unknown } | null | undefined;
    if (rate === null) return null;
    const ok = rate !== undefined && Number.isInteger(rate.max) && (rate.max as number) > 0 && Number.isInteger(rate.perMs) && (rate.perMs as number) > 0;
    return ok ? { max: rate.max as number, perMs: rate.perMs as number } : undefined;
  });
  return { caps, rates, unreadable };
}

/**
 * Limits stored now whose changes the audit log does not hold (declared before declarations were
 * audited): the starts under them go unjudged. Reads the limits a page at a time, each page's last
 * limit the cursor of the next.
 */
export async function unrecordedLimits(store: Pick<JobStore, 'concurrencyLimitList' | 'rateLimitList'>, { caps, rates }: LimitTimelines): Promise<number> {
  let count = 0;
  const lists = [
    [(after?: LimitTarget) => store.concurrencyLimitList({ limit: PAGE, ...(after ? { after } : {}) }), caps, ['max']],
    [(after?: LimitTarget) => store.rateLimitList({ limit: PAGE, ...(after ? { after } : {}) }), rates, ['max', 'perMs']],
  ] as const;
  for (const [list, known, carries] of lists) {
    let after: LimitTarget | undefined;
    for (;;) {
      const page: LimitTarget[] = await list(after);
      count += page.filter((limit) => !known.has(limitKey(limit, 'A limit', carries))).length;
      if (page.length < PAGE) break;
      after = page.at(-1);
    }
  }
  return count;
}
