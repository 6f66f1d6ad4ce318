import type { JobStore, MintResult } from '../store/index.js';
import { describe } from './attempt-executor.js';
import type { SchedulerLogger } from './scheduler-logger.js';
import type { Timers } from './timers.js';

export interface ScheduleMinterOptions {
  /** Longest sleep between passes, so schedules created on other nodes are noticed. */
  readonly maxIdleMs: number;
  /** Schedules handled per pass. */
  readonly batch: number;
}

/** How long to wait when due schedules are locked by another node's pass. */
const HELD_ELSEWHERE_MS = 250;

/**
 * Shortest sleep after a pass that caught up. Ticks that fall closer together than this share a
 * pass instead of waking the minter for each one: with 10,000 schedules every 10 s, a pass covers
 * about 200 ticks rather than 1. An occurrence's job still runs at its tick's time whenever its
 * pass is on time, and at most this late when ticks crowd together.
 */
export const MINT_COALESCE_MS = 200;

/** Schedules a worker's pass locks at most; the pass's work bound usually stops it first. */
export const MINT_BATCH = 1_000;

/** Schedule ids a catch-up line names, as examples; the counts cover every schedule. */
const NAMED_IN_LOG = 3;

/**
 * One line for a whole pass's skipped ticks, so that catching up 10,000 schedules after an outage
 * logs a line per pass, not one per schedule. Null when the pass skipped nothing.
 */
export function skippedSummary(skipped: MintResult['skipped']): string | null {
  if (skipped.length === 0) return null;
  const ticks = (reason: 'missed' | 'overlap') => skipped.filter((s) => s.reason === reason).reduce((sum, s) => sum + s.count, 0);
  const atLeast = skipped.some((s) => s.lowerBound) ? 'at least ' : '';
  const parts = [
    ...(ticks('missed') > 0 ? [`${ticks('missed')} missed while no worker was minting`] : []),
    ...(ticks('overlap') > 0 ? [`${ticks('overlap')} while the previous occurrence was still running`] : []),
  ];
  const named = skipped.slice(0, NAMED_IN_LOG).map((s) => s.scheduleId);
  const more = skipped.length > NAMED_IN_LOG ? `, and ${skipped.length - NAMED_IN_LOG} more` : '';
  const total = ticks('missed') + ticks('overlap');
  return `${skipped.length} schedule(s) skipped ${atLeast}${total} tick(s) (${parts.join('; ')}): schedule ${named.join(', ')}${more}.`;
}

/**
 * Mints the occurrences of due schedules. Each pass reports when the next tick is due (by the
 * store's clock), and the minter sleeps until then, or `maxIdleMs` at most, and at least
 * {@link MINT_COALESCE_MS} after a pass unless a backlog remains. Every node runs one; concurrent
 * passes split the due schedules between them and never mint a tick twice.
 */
export class ScheduleMinter {
  private timer: unknown;
  private running: Promise<void> | undefined;
  private stopped = true;
  /** Passes since start, for tests and diagnostics. */
  passes = 0;

  constructor(
    private readonly store: JobStore,
    private readonly timers: Timers,
    private readonly logger: SchedulerLogger,
    private readonly options: ScheduleMinterOptions,
  ) {}

  start(): void {
    this.stopped = false;
    this.poke();
  }

  /** Runs a pass now (after the current one): a schedule was created or changed here. */
  poke(): void {
    if (this.stopped) return;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = this.timers.setTimeout(() => {
      this.timer = undefined;
      this.running = (this.running ?? Promise.resolve()).then(() => this.pass());
    }, delayMs);
  }

  /**
   * One pass per timer callback: a store pass is bounded (see `scheduleMintDue`), and a backlog
   * that needs many passes runs them one timer turn apart, so heartbeats, claims and `stop()` get
   * their turn in between instead of waiting for the whole catch-up.
   */
  private async pass(): Promise<void> {
    if (this.stopped) return;
    let delay = this.options.maxIdleMs;
    try {
      const result = await this.store.scheduleMintDue({ limit: this.options.batch });
      this.passes += 1;
      const summary = skippedSummary(result.skipped);
      if (summary !== null) this.logger.warn(summary);
      const created = result.minted.filter((m) => m.created).length;
      if (created > 0) this.logger.debug?.(`minted ${created} occurrence(s).`);
      if (result.nextDueAt !== null) {
        const untilDue = Math.max(0, result.nextDueAt.getTime() - result.now.getTime());
        const planned = result.minted.length + result.skipped.length;
        // Due, yet this pass planned nothing: another node holds those rows mid-pass. Let it finish.
        // Due after a pass that planned work: the pass stopped at its bound, so go on at once.
        // Otherwise, ticks due within the coalescing window wait for one pass together.
        const wait = untilDue === 0 ? (planned === 0 ? HELD_ELSEWHERE_MS : 0) : Math.max(untilDue, MINT_COALESCE_MS);
        delay = Math.min(delay, wait);
      }
    } catch (error) {
      this.logger.warn(`minting schedules failed (${describe(error)}); trying again in ${delay} ms.`);
    }
    if (!this.stopped) this.schedule(delay);
  }
}
