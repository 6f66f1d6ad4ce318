import type { Clock } from '../core/index.js';
import type { WakeSubscription } from '../store/index.js';
import type { NodeState } from './node-driver.js';
import type { NodeEventEmitter } from './node-events.js';
import type { NodeHealth, WorkerStats } from './worker-node.types.js';

/**
 * What a node tells about itself: its counters, its last contact with the store, when it started,
 * and the state it last announced through `stateChanged`.
 */
export class NodeMonitor {
  readonly stats: WorkerStats = {
    claimed: 0,
    succeeded: 0,
    failed: 0,
    deadLettered: 0,
    quarantined: 0,
    snoozed: 0,
    cancelled: 0,
    staleOutcomes: 0,
    forfeitedOutcomes: 0,
    leasesLost: 0,
    relinquished: 0,
    sweptLeases: 0,
    purgedJobs: 0,
  };
  /** See {@link NodeHealth.lastContactAt}. */
  private lastContactAt: number | null = null;
  private startedAt: number | null = null;
  /** The state last announced by `stateChanged`. */
  private announced: NodeState = 'idle';

  constructor(
    private readonly clock: Clock,
    private readonly events: NodeEventEmitter,
  ) {}

  /** Notes that a claim, a heartbeat or a registry beat reached the store. */
  contact(): void {
    this.lastContactAt = this.clock.now();
  }

  /** Notes that the node started claiming. */
  started(): void {
    this.startedAt = this.clock.now();
  }

  health(status: NodeState, connection: WakeSubscription['connection'], inFlight: number): NodeHealth {
    return {
      status,
      lastContactAt: this.lastContactAt === null ? null : new Date(this.lastContactAt),
      startedAt: this.startedAt === null ? null : new Date(this.startedAt),
      wakeListener: connection === undefined ? 'none' : connection === 'lost' ? 'disconnected' : connection,
      inFlight,
    };
  }

  /** Emits `stateChanged` when the node's state differs from the one last announced. */
  announce(to: NodeState): void {
    if (to === this.announced) return;
    const from = this.announced;
    this.announced = to;
    this.events.publish('stateChanged', { from, to });
  }
}
