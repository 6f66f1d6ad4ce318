import type { JobStore } from '../store/index.js';
import { describe } from './attempt-executor.js';
import type { SchedulerLogger } from './scheduler-logger.js';

export interface MaintenanceOptions {
  /** Succeeded and cancelled jobs older than this are deleted; null keeps them. */
  readonly retentionMs: number | null;
  /** History entries kept per job. */
  readonly historyPerJob: number;
  /** The node's worker id, which holds the sweep's lease. */
  readonly workerId: string;
  /** How long a sweep's lease lasts: the sweep interval, so one node sweeps per interval. */
  readonly leaseMs: number;
}

/** What one sweep did. */
export interface MaintenanceReport {
  /**
   * Whether this node swept. A timed sweep runs only on the node that holds the sweep's lease;
   * the others find it held and do nothing that interval.
   */
  swept: boolean;
  /** Lapsed leases settled (dead-lettered or cancelled). */
  expired: number;
  /** Dependency edges settled after the outcome write left them (large fan-outs, cascades). */
  settled: number;
  /** Finished jobs deleted under the retention setting. */
  purged: number;
  /** History entries trimmed beyond the per-job bound. */
  trimmed: number;
  /** Pending changes of the job counts folded into the counts (PostgreSQL keeps them as deltas). */
  folded: number;
  /** Node registry rows deleted, not seen for {@link NODE_RETENTION_MS}. */
  prunedNodes: number;
}

/**
 * How long the node registry keeps a node that stopped beating (stopped or crashed): a day, long
 * enough for an operator to see what ran overnight and what died, short enough that a deployment
 * that starts a node per pod (a fresh worker id each time) keeps a registry of a few days' pods
 * at most, not every pod it ever ran.
 */
export const NODE_RETENTION_MS = 86_400_000;

/** The lease every node asks for before a timed sweep. */
export const SWEEP_TASK = 'sweep';

// Each step works in batches, each one statement, bounded by what is due (an index or the trim's
// place in the log leads it there), and stops after a bounded number of them: a backlog drains
// over several sweeps instead of in one long pass.
const LEASE_BATCH = 100;
const SETTLE_BATCH = 1_000;
const PURGE_BATCH = 500;
const TRIM_BATCH = 5_000;
const FOLD_BATCH = 10_000;
const NODE_PRUNE_BATCH = 500;
const MAX_BATCHES = 20;

/**
 * The housekeeping a node runs on a timer: lapsed leases, dependency edges, retention, the history
 * bound, the node registry's retention, and the job counts' pending changes. One node at a time
 * sweeps: each asks for the sweep's lease, and the holder keeps it by renewing it each interval, so
 * a cluster of any size sweeps once per interval and another node takes over within an interval or
 * two of the holder's end. Every step is idempotent and safe to race with the same step elsewhere
 * (a lease can lapse mid-sweep); none applies an effect of its own, it only asks the store to
 * finish what an outcome write started (or to forget what retention lets go).
 */
export class Maintenance {
  private stopping = false;

  constructor(
    private readonly store: JobStore,
    private readonly logger: SchedulerLogger,
    private readonly options: MaintenanceOptions,
  ) {}

  /**
   * Runs one sweep. With `leased`, only if this node holds the sweep's lease (the timer's sweeps);
   * without, at once (an explicit `WorkerNode.sweep()`).
   */
  async sweep({ leased = false }: { readonly leased?: boolean } = {}): Promise<MaintenanceReport> {
    const report: MaintenanceReport = { swept: false, expired: 0, settled: 0, purged: 0, trimmed: 0, folded: 0, prunedNodes: 0 };
    if (this.stopping || (leased && !(await this.holdsLease()))) return report;
    report.swept = true;
    await this.step('sweeping lapsed leases', async () => {
      const swept = await this.store.jobExpireLeases({ limit: LEASE_BATCH });
      for (const lease of swept) {
        this.logger.warn(`lease of ${lease.jobId} attempt ${lease.attempt} lapsed with no attempts left; it is now ${lease.state}.`, { jobId: lease.jobId, attempt: lease.attempt });
      }
      report.expired += swept.length;
      return swept.length === LEASE_BATCH;
    });
    await this.step('settling dependencies', async () => {
      const settled = await this.store.jobSettleDependencies({ limit: SETTLE_BATCH });
      report.settled += settled;
      return settled === SETTLE_BATCH;
    });
    const { retentionMs } = this.options;
    if (retentionMs !== null) {
      await this.step('deleting finished jobs past retention', async () => {
        const purged = await this.store.jobPurge({ olderThanMs: retentionMs, limit: PURGE_BATCH });
        report.purged += purged;
        return purged === PURGE_BATCH;
      });
    }
    await this.step('trimming job history', async () => {
      const { trimmed, examined } = await this.store.historyTrim({ keep: this.options.historyPerJob, limit: TRIM_BATCH });
      report.trimmed += trimmed;
      return examined === TRIM_BATCH;
    });
    await this.step('pruning the node registry', async () => {
      const pruned = await this.store.nodePrune({ olderThanMs: NODE_RETENTION_MS, limit: NODE_PRUNE_BATCH });
      report.prunedNodes += pruned;
      return pruned === NODE_PRUNE_BATCH;
    });
    // Last, so the deltas the purge and the steps above wrote are folded in the same sweep.
    await this.step('folding job counts', async () => {
      const folded = await this.store.jobCountsFold({ limit: FOLD_BATCH });
      report.folded += folded;
      return folded === FOLD_BATCH;
    });
    if (report.purged > 0 || report.trimmed > 0) this.logger.debug?.(`maintenance deleted ${report.purged} finished job(s) and ${report.trimmed} history entries.`);
    return report;
  }

  /**
   * No batch starts after this: a sweep in progress ends when its statement in flight returns, so
   * shutdown waits one bounded statement, never a whole backlog, before the store closes.
   */
  stop(): void {
    this.stopping = true;
  }

  private async holdsLease(): Promise<boolean> {
    const { workerId, leaseMs } = this.options;
    try {
      return await this.store.maintenanceLease({ task: SWEEP_TASK, workerId, leaseMs });
    } catch (error) {
      this.logger.warn(`maintenance could not take the sweep's lease (${describe(error)}); the next interval will try again.`);
      return false;
    }
  }

  /** Runs batches while `run` says a full batch left more behind, up to {@link MAX_BATCHES}. */
  private async step(what: string, run: () => Promise<boolean>): Promise<void> {
    try {
      for (let i = 0; i < MAX_BATCHES && !this.stopping; i++) if (!(await run())) return;
    } catch (error) {
      // After stop the store may be closing under the statement in flight: nothing is lost by it.
      if (this.stopping) this.logger.debug?.(`maintenance stopped while ${what} (${describe(error)}).`);
      else this.logger.warn(`maintenance failed ${what} (${describe(error)}); the next sweep will catch up.`);
    }
  }
}
