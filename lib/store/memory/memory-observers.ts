import type { DriverObserverCommitParams, DriverObserverFailParams, DriverObserverLeaseParams } from '../checked/store-driver.js';
import type { HistoryEntry, ObserverLease } from '../job-store.types.js';
import type { MemoryCursor, MemoryState } from './memory-tables.js';

/** Feeds transition observers: the history log by position, and one leased cursor per observer. */
export class MemoryObservers {
  constructor(private readonly state: MemoryState) {}

  /** Positions are entry ids: one writer at a time means delivery order is id order. */
  historyRead({ after, limit }: { readonly after: string; readonly limit: number }): HistoryEntry[] {
    return this.state.tables.history.filter((entry) => entry.id > Number(after)).slice(0, limit);
  }

  lease({ observer, workerId, leaseMs }: DriverObserverLeaseParams): ObserverLease | null {
    const { tables, clock } = this.state;
    const now = clock.now();
    const tail = tables.history.at(-1)?.id ?? 0;
    const cursor = tables.cursors.get(observer) ?? { lastId: tail, leasedBy: null, leasedUntil: null, failures: 0, retryAt: null, lastError: null };
    const heldByOther = cursor.leasedBy !== null && cursor.leasedBy !== workerId && cursor.leasedUntil !== null && cursor.leasedUntil > now;
    if (heldByOther || (cursor.retryAt !== null && cursor.retryAt > now)) return null;
    tables.cursors.set(observer, { ...cursor, leasedBy: workerId, leasedUntil: now + leaseMs });
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
    return true;
  }

  private heldCursor(observer: string, workerId: string): MemoryCursor | null {
    const cursor = this.state.tables.cursors.get(observer);
    const now = this.state.clock.now();
    if (!cursor || cursor.leasedBy !== workerId || cursor.leasedUntil === null || cursor.leasedUntil <= now) return null;
    return cursor;
  }
}
