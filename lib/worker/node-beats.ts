import { hostname } from 'node:os';
import type { Clock } from '../core/index.js';
import type { JobStore, LeaseRef } from '../store/index.js';
import { describe } from './attempt-executor.js';
import type { NodeEvent } from './node-driver.js';
import { packageVersion } from './package-version.js';
import type { ProgressBoard } from './progress-board.js';
import type { SchedulerLogger } from './scheduler-logger.js';
import { settleWithin, type Timers } from './timers.js';
import type { NodePartDeps } from './worker-node.types.js';
import type { ResolvedWorkerOptions } from './worker-options.js';

/**
 * A node's calls that keep it known to the store without running anything: the heartbeat that
 * renews its leases (carrying progress), the registry beat, and the registry's record of its stop.
 */
export class NodeBeats {
  private readonly store: JobStore;
  private readonly workerId: string;
  private readonly options: ResolvedWorkerOptions;
  private readonly clock: Clock;
  private readonly timers: Timers;
  private readonly logger: SchedulerLogger;
  private readonly progress: ProgressBoard;
  private readonly emit: (event: NodeEvent) => void;
  private readonly contact: () => void;
  /** The registry beat in flight, if any; the stop waits for it before recording the stop. */
  private beating: Promise<void> | undefined;
  /** A beat was sent at some point: this node has a registry row whose stop is worth recording. */
  private registered = false;
  /** The last beat failed: the next failure is logged at debug, so a store without the registry warns once, not every interval. */
  private beatFailing = false;
  private readonly host = hostname();

  constructor(deps: NodePartDeps) {
    this.store = deps.store;
    this.workerId = deps.workerId;
    this.options = deps.options;
    this.clock = deps.clock;
    this.timers = deps.timers;
    this.logger = deps.logger;
    this.progress = deps.progress;
    this.emit = deps.emit;
    this.contact = deps.contact;
  }

  /** Renews the leases the driver holds, with the progress waiting to ride on them. */
  async heartbeat(held: readonly LeaseRef[]): Promise<void> {
    const sentAt = this.clock.now();
    // Pending progress rides on the renewal's own statement; without any, the leases go as they are.
    const leases = this.progress.attach(held);
    try {
      const result = await this.store.jobHeartbeat({ workerId: this.workerId, leases, leaseMs: this.options.leaseMs });
      this.progress.settle(leases, result);
      this.contact();
      this.emit({ type: 'heartbeat_done', now: this.clock.now(), sentAt, renewed: result.renewed, lost: result.lost });
    } catch (error) {
      this.progress.settle(leases, undefined);
      this.logger.warn(`heartbeat failed (${describe(error)}); leases are kept until they would lapse.`);
      this.emit({ type: 'heartbeat_failed', now: this.clock.now() });
    }
  }

  /** Sends a registry beat; the stop waits for the one in flight before it records the stop. */
  beat(running: number): void {
    this.beating = this.send(running);
  }

  /**
   * Writes this node's registry row. A statement of its own rather than a step of the heartbeat's:
   * an idle node sends no heartbeat but must still beat, and a beat that fails (a lock, a store not
   * migrated yet) must never fail a lease renewal. Its failure is logged, never thrown; leases,
   * claims and outcomes go on as they were.
   */
  private async send(running: number): Promise<void> {
    this.registered = true;
    const { queues, concurrency } = this.options;
    try {
      await this.store.nodeBeat({ id: this.workerId, host: this.host, pid: process.pid, version: packageVersion(), queues, concurrency, running });
      this.beatFailing = false;
      this.contact();
      this.emit({ type: 'beat_done', now: this.clock.now() });
    } catch (error) {
      const line = `registry beat failed (${describe(error)}); the node's row is written again at the next heartbeat interval, and leases are not affected.`;
      if (this.beatFailing) this.logger.debug?.(line);
      else this.logger.warn(line);
      this.beatFailing = true;
      this.emit({ type: 'beat_failed', now: this.clock.now() });
    }
  }

  /** Marks this node stopped in the registry, once the beat in flight (if any) has landed, so no beat overtakes it. */
  async recordStop(remaining: () => number): Promise<void> {
    if (!this.registered) return;
    await settleWithin(this.beating, remaining(), this.timers);
    if (remaining() <= 0) return;
    const stop = this.store.nodeStop({ id: this.workerId }).catch((error: unknown) => {
      const line = `recording the stop in the node registry failed (${describe(error)}); the row ages out like a crashed node's.`;
      // Beats already failing were warned about once; the stop failing with them says nothing new.
      if (this.beatFailing) this.logger.debug?.(line);
      else this.logger.warn(line);
    });
    await settleWithin(stop, remaining(), this.timers);
  }
}
