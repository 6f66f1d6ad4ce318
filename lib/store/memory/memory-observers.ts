import type { DriverObserverCommitParams, DriverObserverFailParams, DriverObserverLeaseParams } from '../checked/store-driver.js';
import type { HistoryEntry, ObserverLease } from '../job-store.types.js';
import type { DriverObserverListParams, DriverObserverStatus } from '../operator-reads.js';
import type { MemoryCursor, MemoryState } from './memory-tables.js';

/** Feeds transition observers: the history log by position, and one leased cursor per observer. */
export class MemoryObservers {
  constructor(private readonly state: MemoryState) {}

  /** Positions are entry ids: one writer at a time means delivery order is id order. */
  historyRead({ after, limit }: { readonly after: string; readonly limit: number }): HistoryEntry[] {
    return this.state.tables.history.filter((entry) => entry.id > Number(after)).slice(0, limit);
  }

  lease({ observer, workerId, leaseMs, to, jobs }: DriverObserverLeaseParams): ObserverLease | null {
    const { tables, clock } = this.state;
    const now = clock.now();
    const tail = tables.history.at(-1)?.id ?? 0;
    const cursor = tables.cursors.get(observer) ?? { lastId: tail, leasedBy: null, leasedUntil: null, failures: 0, retryAt: null, lastError: null, updatedAt: now, states: null, jobs: null };
    const heldByOther = cursor.leasedBy !== null && cursor.leasedBy !== workerId && cursor.leasedUntil !== null && cursor.leasedUntil > now;
    if (heldByOther || (cursor.retryAt !== null && cursor.retryAt > now)) return null;
    tables.cursors.set(observer, { ...cursor, leasedBy: workerId, leasedUntil: now + leaseMs, updatedAt: now, states: to, jobs });
    return { observer, position: String(cursor.lastId), failures: cursor.failures };
  }

  commit({ observer, workerId, position }: DriverObserverCommitParams): boolean {
    const lastId = Number(position);
    const cursor = this.heldCursor(observer, workerId);
    if (!cursor) return false;
    if (lastId > cursor.lastId) cursor.lastId = lastId;
    cursor.failures = 0;
    cursor.retryAt = null;
    cursor.lastError = null;
    cursor.updatedAt = this.state.clock.now();
    return true;
  }

  fail({ observer, workerId, error, retryDelayMs }: DriverObserverFailParams): boolean {
    const cursor = this.heldCursor(observer, workerId);
    if (!cursor) return false;
    cursor.failures += 1;
    cursor.retryAt = this.state.clock.now() + retryDelayMs;
    cursor.lastError = error;
    cursor.leasedBy = null;
    cursor.leasedUntil = null;
    cursor.updatedAt = this.state.clock.now();
    return true;
  }

  /**
   * Cursors by observer id, each with the entries after it counted up to `lagScan`, from the first
   * such entry on: the log is kept in id order, so it is found by bisection, as a SQL store finds
   * it through its ordering index.
   */
  list({ limit, lagScan }: DriverObserverListParams): DriverObserverStatus[] {
    const { tables, clock } = this.state;
    const now = clock.now();
    const names = [...tables.cursors.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).slice(0, limit);
    return names.map((observer) => {
      const cursor = tables.cursors.get(observer)!;
      const first = firstAfter(tables.history, cursor.lastId);
      const live = cursor.leasedBy !== null && cursor.leasedUntil !== null && cursor.leasedUntil > now;
      return {
        observer,
        position: String(cursor.lastId),
        leasedBy: live ? cursor.leasedBy : null,
        leasedUntil: live ? new Date(cursor.leasedUntil!) : null,
        failures: cursor.failures,
        retryAt: cursor.retryAt === null ? null : new Date(cursor.retryAt),
        lastError: cursor.lastError,
        updatedAt: new Date(cursor.updatedAt),
        lag: Math.min(tables.history.length - first, lagScan),
        oldestUndeliveredAt: first < tables.history.length ? tables.history[first]!.at : null,
      };
    });
  }

  private heldCursor(observer: string, workerId: string): MemoryCursor | null {
    const cursor = this.state.tables.cursors.get(observer);
    const now = this.state.clock.now();
    if (!cursor || cursor.leasedBy !== workerId || cursor.leasedUntil === null || cursor.leasedUntil <= now) return null;
    return cursor;
  }
}

/** The index of the first entry with an id above `id` in a log kept in id order. */
function firstAfter(history: readonly HistoryEntry[], id: number): number {
  let low = 0;
  let high = history.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (history[mid]!.id > id) high = mid;
    else low = mid + 1;
  }
  return low;
}
