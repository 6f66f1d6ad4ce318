import type { HistoryEntry, HistoryTrimResult } from '../job-store.types.js';
import { inLine, type MemoryState } from './memory-tables.js';

/** The clean-up passes (trimming job history, purging finished jobs) and the maintenance leases. */
export class MemoryRetention {
  /** The trim's place in the log: the id of the last entry a pass looked at. */
  private trimmedUpTo = 0;
  private readonly leases = new Map<string, { readonly workerId: string; readonly until: number }>();

  constructor(private readonly state: MemoryState) {}

  /**
   * Keeps the newest `keep` entries per job among the jobs that gained an entry since the last pass,
   * looking at most at `limit` entries after the trim's place and none an observer has not passed.
   */
  historyTrim({ keep, limit }: { readonly keep: number; readonly limit: number }): HistoryTrimResult {
    const { cursors, history } = this.state.tables;
    const floor = Math.min(...[...cursors.values()].map((c) => c.lastId), Number.POSITIVE_INFINITY);
    const batch = history.filter((entry) => entry.id > this.trimmedUpTo && entry.id <= floor).slice(0, limit);
    const jobs = new Set(batch.map((entry) => entry.jobId));
    const drop = new Set<number>();
    for (const jobId of jobs) {
      const entries = history.filter((entry) => entry.jobId === jobId);
      for (const entry of entries.slice(0, Math.max(0, entries.length - keep))) if (entry.id <= floor) drop.add(entry.id);
    }
    this.removeHistory((entry) => drop.has(entry.id));
    if (batch.length > 0) this.trimmedUpTo = batch.at(-1)!.id;
    return { trimmed: drop.size, examined: batch.length };
  }

  /** Takes or renews a maintenance task's lease by the store's clock. */
  maintenanceLease({ task, workerId, leaseMs }: { readonly task: string; readonly workerId: string; readonly leaseMs: number }): boolean {
    const now = this.state.clock.now();
    const held = this.leases.get(task);
    if (held && held.workerId !== workerId && held.until > now) return false;
    this.leases.set(task, { workerId, until: now + leaseMs });
    return true;
  }

  /**
   * Deletes old succeeded and cancelled jobs with their history and edges; a parent with an open edge
   * stays, and so do a job still in line in its sequence and the opener of a throttle window that has not ended.
   */
  jobPurge({ olderThanMs, limit }: { readonly olderThanMs: number; readonly limit: number }): number {
    const { jobs, children, parents } = this.state.tables;
    const now = this.state.clock.now();
    const cutoff = now - olderThanMs;
    const doomed = [...jobs.values()]
      .filter((row) => (row.state === 'succeeded' || row.state === 'cancelled') && row.finishedAt !== null && row.finishedAt < cutoff)
      .filter((row) => !(children.get(row.id) ?? []).some((edge) => !edge.settled))
      // A job cancelled before its turn is still in line until the job before it ends.
      .filter((row) => !inLine(this.state.tables, row.id))
      // A throttle window lives in its opener's row: the row stays until the window ends.
      .filter((row) => row.windowKind !== 'throttle' || row.windowEndsAt! <= now)
      .slice(0, limit);
    const ids = new Set(doomed.map((row) => row.id));
    for (const id of ids) {
      jobs.delete(id);
      children.delete(id);
      parents.delete(id);
    }
    for (const [parent, edges] of children) children.set(parent, edges.filter((edge) => !ids.has(edge.childId)));
    // A sequence whose tail is gone has nothing to wait for: its next job starts the sequence afresh.
    for (const [key, tail] of this.state.tables.sequences) if (!jobs.has(tail)) this.state.tables.sequences.delete(key);
    this.removeHistory((entry) => ids.has(entry.jobId));
    return ids.size;
  }

  /** Removes entries in place, keeping the log's order. */
  private removeHistory(drop: (entry: HistoryEntry) => boolean): void {
    const { history } = this.state.tables;
    const kept = history.filter((entry) => !drop(entry));
    history.length = 0;
    history.push(...kept);
  }
}
