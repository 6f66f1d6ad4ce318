// The schedule types of the store contract. A leaf: it imports nothing from lib/store, so the
// contract (job-store.types.ts) can name them without an import cycle.
import type { JobRecord, TraceContext } from '../../core/index.js';

/** Whether a schedule mints: `active`, `paused` by an operator, or `dead_lettered` after an occurrence failed for good. */
export type ScheduleState = 'active' | 'paused' | 'dead_lettered';

/** A recurring schedule as every store reports it. */
export interface Schedule {
  readonly id: string;
  /** The wire name of the jobs it mints. */
  readonly name: string;
  readonly queue: string;
  readonly payload: unknown;
  readonly maxAttempts: number;
  readonly recurrence: { readonly kind: 'cron'; readonly cron: string; readonly timezone: string } | { readonly kind: 'interval'; readonly everyMs: number; readonly anchorAt: Date };
  readonly catchUp: 'skip' | 'coalesce';
  readonly noOverlap: boolean;
  readonly misfireGraceMs: number;
  readonly state: ScheduleState;
  /** The next tick, or null when the pattern never fires again. */
  readonly nextFireAt: Date | null;
  /** The tick of the most recent occurrence it minted. */
  readonly lastFiredFor: Date | null;
  readonly lastJobId: string | null;
  /** The occurrence whose dead-lettering stopped the schedule. */
  readonly haltedJobId: string | null;
  /** Ticks that minted nothing (missed during downtime, or skipped by noOverlap). */
  readonly skippedTicks: number;
  readonly lastSkippedFor: Date | null;
  readonly lastSkipReason: 'missed' | 'overlap' | null;
  /**
   * The trace context of the code that created or last changed the schedule's definition; each
   * occurrence's attempt span links to it. Null when none was active (a `@Job` schedule at boot).
   */
  readonly traceContext: TraceContext | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** A recurring schedule to create or update. Give `cron` (with an optional `timezone`) or `everyMs`. */
export interface ScheduleInput<TPayload = unknown> {
  /** A UUID; a UUIDv7 is generated otherwise. Upserting an existing id updates that schedule. */
  readonly id?: string;
  /** The wire name of the jobs it mints. */
  readonly name: string;
  /** The payload of every minted job. Default `{}`. */
  readonly payload?: TPayload;
  readonly queue?: string;
  readonly maxAttempts?: number;
  /** A cron pattern (5 fields, or 6 with seconds). */
  readonly cron?: string;
  /** IANA time zone of the cron pattern. Default `UTC`. */
  readonly timezone?: string;
  /** A fixed interval in milliseconds (at least 1,000). */
  readonly everyMs?: number;
  /** The instant intervals count from. Default: when the schedule is created. */
  readonly startAt?: Date;
  /** After downtime: `skip` missed ticks (default) or run them as one make-up job (`coalesce`). */
  readonly catchUp?: 'skip' | 'coalesce';
  /** Mint nothing while the previous occurrence is not terminal. Default false. */
  readonly noOverlap?: boolean;
  /** How late a tick may be seen and still run. Default 60 s. */
  readonly misfireGraceMs?: number;
  /**
   * The trace context occurrences link to (see {@link Schedule.traceContext}); the client fills
   * it in from the active span when tracing is on. Stored when the schedule is created or its
   * definition changes; an upsert that changes nothing keeps the stored one.
   */
  readonly traceContext?: TraceContext;
}

/** What an upsert did. */
export interface ScheduleUpsertResult {
  readonly schedule: Schedule;
  readonly created: boolean;
  /** False when the stored definition already matched. */
  readonly changed: boolean;
}

/** One minting pass over due schedules. */
export interface MintResult {
  readonly minted: readonly MintedOccurrence[];
  /**
   * Ticks that minted nothing, per schedule. `lowerBound` is set when `count` is a lower bound:
   * a cron schedule missed more ticks than one pass steps through (see {@link planMint}).
   */
  readonly skipped: readonly SkippedTicks[];
  /** The earliest upcoming tick of any active schedule: when the next pass has work. */
  readonly nextDueAt: Date | null;
  /** The store's clock during the pass. */
  readonly now: Date;
}

/** One occurrence a minting pass wrote (or found written: `created` false). */
export interface MintedOccurrence {
  readonly scheduleId: string;
  readonly jobId: string;
  readonly scheduledFor: Date;
  readonly created: boolean;
}

/** Ticks of one schedule that minted nothing in a pass. */
export interface SkippedTicks {
  readonly scheduleId: string;
  readonly count: number;
  readonly reason: 'missed' | 'overlap';
  readonly lowerBound?: true;
}

/** What a schedule replay did: the schedule, and the replayed occurrence (null when there was none). */
export interface ScheduleReplayResult {
  readonly schedule: Schedule;
  readonly job: JobRecord | null;
}
