import { isTerminalState } from '../core/index.js';
import type { HistoryEntry, JobStore } from '../store/index.js';
import type { VerifyRule, VerifyViolation } from './history-rules.js';
import { MAX_WAITING } from './stamp-margins.js';

/** A keyed job from the entry that made it hold its key (its creation, or a replay) until one that ended it. */
interface Holding {
  readonly entry: HistoryEntry;
  readonly key: string;
  readonly watchers: Twin[];
}

/** A job that took a key while another looked to hold it: judged once that one's holding has ended. */
interface Twin {
  readonly entry: HistoryEntry;
  readonly key: string;
  pending: number;
  readonly held: HistoryEntry[];
}

/** The key as a quoted string, control characters escaped and clipped: it is the application's text. */
const quoted = (text: string) => JSON.stringify(text.length > 100 ? `${text.slice(0, 100)}…` : text);

/** What a watch follows: a job's unique key (per wire name), or the occurrence a schedule minted it for. */
export interface HeldKind {
  readonly rule: Extract<VerifyRule, 'unique_key_twice' | 'occurrence_twice'>;
  /** The sentence for a job that took `key` while `other` held it. */
  describe(entry: HistoryEntry, other: HistoryEntry, key: string): string;
}

/** Unique keys, one per wire name (docs/unique-jobs.md). */
export const UNIQUE_KEYS: HeldKind = {
  rule: 'unique_key_twice',
  describe: (entry, other, key) =>
    `Job ${entry.jobId} took the unique key ${quoted(key.slice(key.indexOf('\0') + 1))} of ${entry.name} in entry ${entry.id}, while job ${other.jobId}, unfinished since entry ${other.id}, still held it.`,
};

/** Occurrences: one job per schedule and tick (docs/schedules.md), whose id is the occurrence id. */
export const OCCURRENCES: HeldKind = {
  rule: 'occurrence_twice',
  describe: (entry, other, key) => {
    const [schedule, tick] = key.split('\0');
    return `Job ${entry.jobId} was minted for the occurrence of schedule ${schedule} at ${tick} in entry ${entry.id}, while job ${other.jobId}, unfinished since entry ${other.id}, was that occurrence.`;
  },
};

/**
 * Follows, in log order, which unfinished jobs hold each key of a kind: a job holds its key from
 * the entry that made it unfinished (its creation, a replay) to the one that finished it. A job
 * that takes a key another still held breaks the kind's rule, when the other took it at least
 * `marginMs` before and gave it up at least `marginMs` after (the same margin, and for the same
 * reasons, as the limits': stamps are taken as statements or transactions begin). It holds the
 * unfinished jobs with a key only, so its memory follows them, not the history.
 */
export class KeyWatch {
  readonly violations: VerifyViolation[] = [];
  /** Jobs that took a key in the range, judged against the jobs holding it. */
  judged = 0;
  /** Takings that looked like twins while MAX_WAITING others waited: not judged. */
  unjudged = 0;
  private readonly holding = new Map<string, Holding>();
  private readonly byKey = new Map<string, Set<Holding>>();
  private twins = 0;

  constructor(
    private readonly kind: HeldKind,
    private readonly marginMs: number,
    private readonly inRange: (entry: HistoryEntry) => boolean,
  ) {}

  /** Whether the job is known to hold its key now, so its key need not be read again. */
  holds(jobId: string): boolean {
    return this.holding.has(jobId);
  }

  /** One entry of a job whose key is `heldKey` (null when it has none, or is known to hold it already). */
  see(entry: HistoryEntry, heldKey: string | null): void {
    const held = this.holding.get(entry.jobId);
    if (isTerminalState(entry.state)) {
      if (held) this.release(held, entry.at.getTime());
      return;
    }
    if (held || heldKey === null) return;
    const key = heldKey;
    const t = entry.at.getTime();
    const others = this.byKey.get(key);
    if (this.inRange(entry)) {
      this.judged += 1;
      const before = [...(others ?? [])].filter((h) => h.entry.at.getTime() <= t - this.marginMs);
      if (before.length > 0 && this.twins >= MAX_WAITING) this.unjudged += 1;
      else if (before.length > 0) {
        this.twins += 1;
        const twin: Twin = { entry, key, pending: before.length, held: [] };
        for (const other of before) other.watchers.push(twin);
      }
    }
    const holding: Holding = { entry, key, watchers: [] };
    this.holding.set(entry.jobId, holding);
    if (others) others.add(holding);
    else this.byKey.set(key, new Set([holding]));
  }

  /** Ends the holdings still open: each job's stored state says whether it still holds its key. */
  async finish(store: Pick<JobStore, 'jobStatusMany'>): Promise<void> {
    const watched = [...this.holding.values()].filter((h) => h.watchers.length > 0);
    for (let i = 0; i < watched.length; i += 1_000) {
      const slice = watched.slice(i, i + 1_000);
      const rows = new Map((await store.jobStatusMany({ jobIds: slice.map((h) => h.entry.jobId) })).map((row) => [row.id, row]));
      for (const h of slice) {
        const row = rows.get(h.entry.jobId);
        this.release(h, row !== undefined && !isTerminalState(row.state) ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY);
      }
    }
  }

  private release(h: Holding, at: number): void {
    this.holding.delete(h.entry.jobId);
    const set = this.byKey.get(h.key);
    set?.delete(h);
    if (set?.size === 0) this.byKey.delete(h.key);
    for (const twin of h.watchers) {
      if (at >= twin.entry.at.getTime() + this.marginMs) twin.held.push(h.entry);
      twin.pending -= 1;
      if (twin.pending > 0) continue;
      this.twins -= 1;
      if (twin.held.length > 0) this.report(twin);
    }
  }

  private report({ entry, key, held }: Twin): void {
    const other = held[0]!;
    this.violations.push({ rule: this.kind.rule, jobId: entry.jobId, entryIds: [other.id, entry.id], message: this.kind.describe(entry, other, key) });
  }
}
