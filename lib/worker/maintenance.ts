import type { Clock } from '../core/index.js';
import type { JobStore } from '../store/index.js';
import { describe } from './attempt-executor.js';
import type { SchedulerLogger } from './scheduler-logger.js';

export interface MaintenanceOptions {
  /** Succeeded and cancelled jobs older than this are deleted; null keeps them. */
  readonly retentionMs: number | null;
  /** History entries kept per job. */
  readonly historyPerJob: number;
}

/** What one sweep did. */
export interface MaintenanceReport {
  /** Lapsed leases settled (dead-lettered or cancelled). */
  expired: number;
  /** Dependency edges settled after the outcome write left them (large fan-outs, cascades). */
  settled: number;
  /** Finished jobs deleted under the retention setting. */
  purged: number;
  /** History entries trimmed beyond the per-job bound. */
  trimmed: number;
}

// Each step works in small batches, each its own short transaction, and stops after a bounded
// number of them: a backlog drains over several sweeps instead of in one long lock-holding pass.
const LEASE_BATCH = 100;
const SETTLE_BATCH = 1_000;
const PURGE_BATCH = 500;
const TRIM_BATCH = 1_000;
const MAX_BATCHES = 20;
// Trimming scans the whole log; retries rarely push a job past the bound, so it runs hourly.
const TRIM_EVERY_MS = 3_600_000;

/**
 * The housekeeping every node runs on a timer. Every step is idempotent and safe to race with the
 * same step on other nodes; none applies an effect of its own, it only asks the store to finish
 * what an outcome write started (or to forget what retention lets go).
 */
export class Maintenance {
  private lastTrimAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly store: JobStore,
    private readonly logger: SchedulerLogger,
    private readonly clock: Clock,
    private readonly options: MaintenanceOptions,
  ) {}

  async sweep(): Promise<MaintenanceReport> {
    const report: MaintenanceReport = { expired: 0, settled: 0, purged: 0, trimmed: 0 };
    await this.step('sweeping lapsed leases', LEASE_BATCH, async () => {
      const swept = await this.store.jobExpireLeases({ limit: LEASE_BATCH });
      for (const lease of swept) {
        this.logger.warn(`lease of ${lease.jobId} attempt ${lease.attempt} lapsed with no attempts left; it is now ${lease.state}.`);
      }
      report.expired += swept.length;
      return swept.length;
    });
    await this.step('settling dependencies', SETTLE_BATCH, async () => {
      const settled = await this.store.jobSettleDependencies({ limit: SETTLE_BATCH });
      report.settled += settled;
      return settled;
    });
    const { retentionMs } = this.options;
    if (retentionMs !== null) {
      await this.step('deleting finished jobs past retention', PURGE_BATCH, async () => {
        const purged = await this.store.jobPurge({ olderThanMs: retentionMs, limit: PURGE_BATCH });
        report.purged += purged;
        return purged;
      });
    }
    const now = this.clock.now();
    if (now - this.lastTrimAt >= TRIM_EVERY_MS) {
      this.lastTrimAt = now;
      await this.step('trimming job history', TRIM_BATCH, async () => {
        const trimmed = await this.store.historyTrim({ keep: this.options.historyPerJob, limit: TRIM_BATCH });
        report.trimmed += trimmed;
        return trimmed;
      });
    }
    if (report.purged > 0 || report.trimmed > 0) this.logger.debug?.(`maintenance deleted ${report.purged} finished job(s) and ${report.trimmed} history entries.`);
    return report;
  }

  private async step(what: string, batch: number, run: () => Promise<number>): Promise<void> {
    try {
      for (let i = 0; i < MAX_BATCHES; i++) if ((await run()) < batch) return;
    } catch (error) {
      this.logger.warn(`maintenance failed ${what} (${describe(error)}); the next sweep will catch up.`);
    }
  }
}
