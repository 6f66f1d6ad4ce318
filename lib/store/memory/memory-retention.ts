import type { HistoryEntry } from '../job-store.types.js';
import type { MemoryState } from './memory-tables.js';

/** The clean-up passes: trimming job history and purging finished jobs. */
export class MemoryRetention {
  constructor(private readonly state: MemoryState) {}

  /** Keeps the newest `keep` entries per job; an entry some observer has not passed yet stays. */
  historyTrim({ keep, limit }: { readonly keep: number; readonly limit: number }): number {
    const { cursors, history } = this.state.tables;
    const floor = Math.min(...[...cursors.values()].map((c) => c.lastId), Number.POSITIVE_INFINITY);
    const perJob = new Map<string, number>();
    const drop = new Set<number>();
    for (let i = history.length - 1; i >= 0; i--) {
      const entry = history[i]!;
      const count = (perJob.get(entry.jobId) ?? 0) + 1;
      perJob.set(entry.jobId, count);
      if (count > keep && entry.id <= floor && drop.size < limit) drop.add(entry.id);
    }
    this.removeHistory((entry) => drop.has(entry.id));
    return drop.size;
  }

  /** Deletes old succeeded and cancelled jobs with their history and edges; a parent with an open edge stays. */
  jobPurge({ olderThanMs, limit }: { readonly olderThanMs: number; readonly limit: number }): number {
    const { jobs, children, parents } = this.state.tables;
    const cutoff = this.state.clock.now() - olderThanMs;
    const doomed = [...jobs.values()]
      .filter((row) => (row.state === 'succeeded' || row.state === 'cancelled') && row.finishedAt !== null && row.finishedAt < cutoff)
      .filter((row) => !(children.get(row.id) ?? []).some((edge) => !edge.settled))
      .slice(0, limit);
    const ids = new Set(doomed.map((row) => row.id));
    for (const id of ids) {
      jobs.delete(id);
      children.delete(id);
      parents.delete(id);
    }
    for (const [parent, edges] of children) children.set(parent, edges.filter((edge) => !ids.has(edge.childId)));
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
