import type { RateWindow } from '../rate-window.js';
import type { Clock, FinishMode, HistoryPolicy, JobState, LifecycleRules } from '../../core/index.js';
import type { JobRow } from '../job-row.js';
import type { AuditRecord, HistoryEntry } from '../job-store.types.js';
import type { ScheduleRow } from '../schedules/schedule.js';
import type { WakeHub } from '../wake-hints.js';

/**
 * Hooks the in-memory store calls inside each write, in the order the writes happen. They see what
 * was stored, including whatever a broken rule let through, so a checker built on them judges the
 * store's behaviour rather than trusting it.
 */
export interface MemoryStoreProbe {
  /** A job row was inserted (`before` undefined) or rewritten. */
  rowWritten?(before: JobRow | undefined, after: JobRow): void;
  /** A dependency edge settled: its parent's end counted toward the child's latch. */
  edgeSettled?(parentId: string, childId: string): void;
  historyAppended?(entry: HistoryEntry): void;
  /** A claimed job took its concurrency slots. */
  slotTaken?(jobId: string): void;
  /** A job gave its slots back. */
  slotReleased?(jobId: string): void;
}

/** A transition observer's place in the history log, and who holds its delivery lease. */
export interface MemoryCursor {
  lastId: number;
  leasedBy: string | null;
  leasedUntil: number | null;
  failures: number;
  retryAt: number | null;
  lastError: string | null;
  /** The store's clock at the last lease, commit or failure. */
  updatedAt: number;
  /** The states and wire names the observer hears about, as its last lease recorded them; null for everything. */
  states: readonly JobState[] | null;
  jobs: readonly string[] | null;
}

/** A dependency edge, kept under its parent. */
export interface MemoryEdge {
  readonly childId: string;
  /** Set once the parent's end has counted toward the child; an edge settles at most once. */
  settled: boolean;
  /** Set when the edge is a sequence's order, to the child's `afterFailure`. */
  readonly sequence?: 'block' | 'continue';
}

/** A registry row as the in-memory store keeps it: instants in epoch ms by the store's clock. */
export interface MemoryNode {
  readonly id: string;
  readonly host: string;
  readonly pid: number;
  readonly version: string;
  readonly queues: readonly string[];
  readonly concurrency: number;
  readonly running: number;
  readonly startedAt: number;
  readonly lastSeenAt: number;
  readonly stoppedAt: number | null;
  readonly finish: FinishMode;
}

/**
 * Everything the in-memory store keeps, one field per table of a SQL store. The test and oracle
 * helpers of MemoryJobStore read these directly, so what they see is what was stored.
 */
export class MemoryTables {
  readonly jobs = new Map<string, JobRow>();
  readonly pausedQueues = new Set<string>();
  /** Queues resumed at some point: like a SQL store's pause rows, they stay listed without jobs. */
  readonly knownQueues = new Set<string>();
  readonly schedules = new Map<string, ScheduleRow>();
  readonly auditLog: AuditRecord[] = [];
  /** Edges by parent. */
  readonly children = new Map<string, MemoryEdge[]>();
  /** Each sequence's tail: the job its next enqueue runs after, by sequence key. */
  readonly sequences = new Map<string, string>();
  /** Parent ids by child, for the ancestor walk of jobParentOutput. */
  readonly parents = new Map<string, string[]>();
  /** Caps by limit key (`queue:<name>` or `key:<concurrency key>`). */
  readonly concurrencyLimits = new Map<string, number>();
  /** Rate limits by limit key, with the starts each has counted (rate-window.ts). */
  readonly rateLimits = new Map<string, RateWindow>();
  readonly history: HistoryEntry[] = [];
  readonly cursors = new Map<string, MemoryCursor>();
  /** Running jobs that hold their concurrency slots: claim takes them, leaving `running` gives them back. */
  readonly slotHolders = new Set<string>();
  /** The node registry, by worker id. */
  readonly nodes = new Map<string, MemoryNode>();
  /** The next enqueue order number. */
  nextSeq = 1;
  nextHistoryId = 1;
  nextAuditId = 1;
}

/** What every part of the memory driver shares: the tables and the settings they are written under. */
export interface MemoryState {
  readonly tables: MemoryTables;
  readonly clock: Clock;
  readonly probe: MemoryStoreProbe;
  readonly rules: LifecycleRules;
  readonly hints: WakeHub;
  readonly historyPolicy: HistoryPolicy;
  readonly finish: FinishMode;
}

/**
 * True when a job's sequence edge is open: its turn has not come. A job that ended that way
 * (cancelled while waiting) is still in line, and the next job of its sequence waits for its turn.
 */
export function inLine(tables: MemoryTables, jobId: string): boolean {
  for (const parentId of tables.parents.get(jobId) ?? []) {
    if ((tables.children.get(parentId) ?? []).some((edge) => edge.childId === jobId && edge.sequence !== undefined && !edge.settled)) return true;
  }
  return false;
}
