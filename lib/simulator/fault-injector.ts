import { DEAD_LETTER_STATES, isDeadLetterState, type SeededRandom } from '../core/index.js';
import type { RowView, FaultKind, EventLog } from './sim-event.js';
import type { CallResult } from './store-gateway.js';
import type { SimSettings } from './sim-settings.js';
import type { NodeLink } from './node-link.js';
import type { NodeTimers, VirtualScheduler } from './virtual-scheduler.js';
import { TERMINAL } from './oracles/index.js';
import { everyRandomly } from './every-randomly.js';

/** What the injector needs to know of a node. */
export interface FaultTarget {
  readonly index: number;
  readonly generation: number;
  readonly timers: NodeTimers;
  readonly link: NodeLink;
  down: boolean;
  /** The node's graceful stop (`WorkerNode.stop`). */
  stop(): Promise<void>;
}

export interface FaultInjectorDeps {
  readonly settings: SimSettings;
  readonly scheduler: VirtualScheduler;
  readonly random: SeededRandom;
  readonly log: EventLog;
  readonly nodes: () => readonly FaultTarget[];
  /** Brings a crashed node back with a new worker id. */
  readonly restart: (node: FaultTarget) => void;
  /** The latest row of every job, to pick operator targets from. */
  readonly rows: () => Iterable<RowView>;
  readonly operator: (op: string, ...args: unknown[]) => Promise<CallResult>;
  /** The most a node's graceful stop may take. */
  readonly shutdownBoundMs: number;
  /** The sequenced jobs, whose failures the sequence operator replays and discards (sequence-operator.ts). */
  readonly sequenced?: ReadonlySet<string>;
}

/**
 * Schedules the safety phase's node and operator faults, each at seeded intervals around its mean
 * (network and hint faults live in each {@link NodeLink}). Everything stops when `stop()` is called.
 */
export class FaultInjector {
  private active = true;

  constructor(private readonly deps: FaultInjectorDeps) {}

  start(): void {
    const { faults, leaseMs } = this.deps.settings;
    const { scheduler, random } = this.deps;
    this.every(faults.crashEveryMs, () => {
      const node = this.pick(this.alive());
      if (!node) return;
      node.down = true;
      node.timers.crash();
      this.record('crash', node);
      scheduler.at(500 + random.nextInt(2500), () => this.deps.restart(node));
    });
    this.every(faults.isolateEveryMs, () => {
      const node = this.pick(this.alive().filter((n) => !n.link.isolated));
      if (!node) return;
      const mode = random.next() < 0.5 ? 'fail' : 'withhold';
      node.link.isolate(Math.floor(faults.isolateMaxMs * (0.3 + 0.7 * random.next())), mode);
      this.record(mode === 'fail' ? 'isolate_fail' : 'isolate_withhold', node);
    });
    this.every(faults.pauseEveryMs, () => {
      const node = this.pick(this.alive().filter((n) => !n.timers.isPaused()));
      if (!node) return;
      node.timers.pause(scheduler.now() + Math.floor(leaseMs * (1.2 + 1.8 * random.next())));
      this.record('pause', node);
    });
    this.every(faults.operatorEveryMs, () => this.operate());
    // A graceful restart, often while the node is isolated with its calls withheld or its replies
    // lost: the stop must end within its bound whatever it was waiting for.
    this.every(faults.shutdownEveryMs, () => {
      // A paused process handles its SIGTERM only once it runs again; a stopping one is never
      // paused or crashed (it is down), so its bound is on its own running time.
      const node = this.pick(this.alive().filter((n) => !n.timers.isPaused()));
      if (!node) return;
      node.down = true;
      this.record('shutdown', node);
      if (!node.link.isolated && random.next() < 0.5) {
        // Half the time the store stops answering as the stop begins, for longer than the stop may
        // wait: it must give up on its hand-back and its last writes, and stop anyway.
        node.link.isolate(this.deps.shutdownBoundMs + random.nextInt(2 * leaseMs), 'withhold');
        this.record('isolate_withhold', node);
      }
      const target = `node${node.index}.${node.generation}`;
      void node.stop().then(() => {
        this.deps.log.emit({ type: 'stopped', at: scheduler.now(), target });
        scheduler.at(random.nextInt(1000), () => this.deps.restart(node));
      });
    });
  }

  stop(): void {
    this.active = false;
  }

  /** An operator cancels an unfinished job, or replays a dead-lettered or quarantined one, or now and then discards it. */
  private operate(): void {
    const rows = [...this.deps.rows()];
    const log = (kind: FaultKind, id: string) => this.deps.log.emit({ type: 'fault', at: this.deps.scheduler.now(), kind, target: id });
    if (this.deps.random.next() < 0.5) {
      const target = this.pick(rows.filter((r) => !TERMINAL.has(r.state)));
      if (target) void this.deps.operator('jobCancel', { jobId: target.id }).then(() => log('operator_cancel', target.id));
    } else {
      // Not the sequences' failures: those would crowd out the rest, and have an operator of their own.
      const target = this.pick(rows.filter((r) => isDeadLetterState(r.state) && this.deps.sequenced?.has(r.id) !== true));
      if (!target) return;
      if (this.deps.random.next() < 0.25) {
        void this.deps.operator('jobCancel', { jobId: target.id, onlyFrom: DEAD_LETTER_STATES }).then(() => log('operator_discard', target.id));
      } else {
        void this.deps.operator('jobReplay', { jobId: target.id }).then(() => log('operator_replay', target.id));
      }
    }
  }

  private every(meanMs: number, act: () => void): void {
    everyRandomly(this.deps.scheduler, this.deps.random, meanMs, () => this.active, act);
  }

  private alive(): FaultTarget[] {
    return this.deps.nodes().filter((n) => !n.down);
  }

  private pick<T>(items: readonly T[]): T | undefined {
    return items.length === 0 ? undefined : items[this.deps.random.nextInt(items.length)];
  }

  private record(kind: FaultKind, node: FaultTarget): void {
    this.deps.log.emit({ type: 'fault', at: this.deps.scheduler.now(), kind, target: `node${node.index}.${node.generation}` });
  }
}
