import type { JobStore } from '../store/index.js';
import { describe } from './attempt-executor.js';
import type { SchedulerLogger } from './scheduler-logger.js';
import type { Timers } from './timers.js';

export interface ScheduleMinterOptions {
  /** Longest sleep between passes, so schedules created on other nodes are noticed. */
  readonly maxIdleMs: number;
  /** Schedules handled per pass. */
  readonly batch: number;
}

/**
 * Mints the occurrences of due schedules. Each pass reports when the next tick is due (by the
 * store's clock), and the minter sleeps exactly until then, or `maxIdleMs` at most. Every node runs
 * one; concurrent passes split the due schedules between them and never mint a tick twice.
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

  private async pass(): Promise<void> {
    if (this.stopped) return;
    let delay = this.options.maxIdleMs;
    try {
      for (;;) {
        const result = await this.store.scheduleMintDue({ limit: this.options.batch });
        this.passes += 1;
        for (const skip of result.skipped) {
          this.logger.warn(`schedule ${skip.scheduleId} skipped ${skip.count} tick(s) (${skip.reason === 'missed' ? 'missed while no worker was minting' : 'the previous occurrence was still running'}).`);
        }
        const created = result.minted.filter((m) => m.created).length;
        if (created > 0) this.logger.debug?.(`minted ${created} occurrence(s).`);
        if (result.minted.length + result.skipped.length < this.options.batch) {
          if (result.nextDueAt !== null) delay = Math.min(delay, Math.max(0, result.nextDueAt.getTime() - result.now.getTime()));
          break;
        }
        // A backlog is left to the next node rather than holding up this one's shutdown.
        if (this.stopped) break;
      }
    } catch (error) {
      this.logger.warn(`minting schedules failed (${describe(error)}); trying again in ${delay} ms.`);
    }
    if (!this.stopped) this.schedule(delay);
  }
}
