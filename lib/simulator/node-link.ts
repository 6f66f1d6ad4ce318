import type { SeededRandom } from '../core/index.js';
import type { JobStore, WakeHintParams, WakeListener, WakeSubscription } from '../store/index.js';
import type { Caller, EventLog } from './sim-event.js';
import type { FaultSettings } from './sim-settings.js';
import type { StoreGateway } from './store-gateway.js';
import type { NodeTimers, VirtualScheduler } from './virtual-scheduler.js';

/** Methods that never leave the process: no network, no faults. */
const LOCAL = new Set(['beginAttempt', 'close', 'migrate']);

/**
 * The node registry's writes. No oracle judges them (they touch no job), so they skip the
 * network's latency and lost replies, whose random draws would change every recorded seed's run;
 * an isolated node's beats still fail, as they would.
 */
const REGISTRY = new Set(['nodeBeat', 'nodeStop']);

/** The error a caller sees when the store cannot be reached, or its reply was lost. */
export class SimulatedNetworkError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SimulatedNetworkError';
  }
}

/** Fault counters a link adds to. */
export interface LinkCounters {
  ackLost: number;
  refused: number;
  withheld: number;
}

/**
 * One caller's connection to the store, with the faults of a real network: latency both ways, a
 * reply lost after the write committed, and isolation, during which calls fail or are withheld
 * and delivered late when it heals. Replies reach the caller through its own timers, so a paused
 * node gets them when it resumes and a crashed one never does.
 */
export class NodeLink {
  private isolatedUntil = -Infinity;
  private isolationMode: 'fail' | 'withhold' = 'fail';
  private readonly withheld: (() => void)[] = [];
  private hintFaultsOn = true;

  constructor(
    private readonly caller: Caller,
    private readonly gateway: StoreGateway,
    private readonly store: JobStore,
    private readonly scheduler: VirtualScheduler,
    private readonly timers: NodeTimers,
    private readonly random: SeededRandom,
    private readonly faults: () => FaultSettings,
    private readonly log: EventLog,
    private readonly counters: LinkCounters,
  ) {}

  /** The store as this caller sees it. */
  view(): JobStore {
    return new Proxy(this.store, {
      get: (target, prop, receiver) => {
        const value = Reflect.get(target, prop, receiver) as unknown;
        if (typeof value !== 'function' || typeof prop !== 'string') return value;
        if (prop === 'subscribeWakeHints') return ({ listener }: WakeHintParams) => this.subscribe(listener);
        if (LOCAL.has(prop)) return (value as (...a: unknown[]) => unknown).bind(target);
        if (REGISTRY.has(prop)) return (...args: unknown[]) => this.registryCall(prop, value as (...a: unknown[]) => Promise<unknown>, args);
        return (...args: unknown[]) => this.call(prop, args);
      },
    });
  }

  get isolated(): boolean {
    return this.scheduler.now() < this.isolatedUntil;
  }

  isolate(forMs: number, mode: 'fail' | 'withhold'): void {
    this.isolatedUntil = this.scheduler.now() + forMs;
    this.isolationMode = mode;
    this.scheduler.at(forMs, () => this.heal());
  }

  /** Ends any isolation now and delivers what was withheld, in order. */
  heal(): void {
    if (this.scheduler.now() < this.isolatedUntil) this.isolatedUntil = this.scheduler.now();
    for (const deliver of this.withheld.splice(0)) deliver();
  }

  /** Turns hint faults off for the liveness phase. */
  calmHints(): void {
    this.hintFaultsOn = false;
  }

  call(op: string, args: unknown[]): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const arrive = () => {
        if (this.isolated && this.isolationMode === 'withhold') {
          this.counters.withheld += 1;
          this.withheld.push(() => this.scheduler.at(0, arrive));
          return;
        }
        if (this.isolated) {
          this.counters.refused += 1;
          this.reply(() => reject(new SimulatedNetworkError(`${op}: the store is unreachable`)));
          return;
        }
        void this.gateway.execute(this.caller, op, args).then(({ result, error }) => {
          if (error) return this.reply(() => reject(error));
          if (this.random.next() < this.faults().ackLoss) {
            this.counters.ackLost += 1;
            this.log.emit({ type: 'fault', at: this.scheduler.now(), kind: 'ack_lost', target: `${label(this.caller)} ${op}` });
            return this.reply(() => reject(new SimulatedNetworkError(`${op}: the connection dropped before the reply`)));
          }
          this.reply(() => resolve(result));
        });
      };
      this.scheduler.at(this.latency(), arrive);
    });
  }

  private registryCall(op: string, method: (...a: unknown[]) => Promise<unknown>, args: unknown[]): Promise<unknown> {
    if (this.isolated) return Promise.reject(new SimulatedNetworkError(`${op}: the store is unreachable`));
    return method.apply(this.store, args);
  }

  private reply(deliver: () => void): void {
    this.timers.setTimeout(deliver, this.latency());
  }

  private latency(): number {
    const max = this.faults().latencyMaxMs;
    return max === 0 ? 0 : this.random.nextInt(max + 1);
  }

  /** Wake-up hints reach the node through its timers; in the safety phase some are lost, doubled or late. */
  private async subscribe(listener: WakeListener): Promise<WakeSubscription> {
    const subscription = await this.store.subscribeWakeHints({ listener: (queue) => {
      if (this.timers.isCrashed || this.isolated) return;
      const f = this.faults();
      if (this.hintFaultsOn && this.random.next() < f.hintLoss) {
        this.log.emit({ type: 'fault', at: this.scheduler.now(), kind: 'hint_lost', target: label(this.caller) });
        return;
      }
      const delay = this.hintFaultsOn && f.hintDelayMaxMs > 0 ? this.random.nextInt(f.hintDelayMaxMs + 1) : 0;
      if (delay > 0) this.log.emit({ type: 'fault', at: this.scheduler.now(), kind: 'hint_delayed', target: label(this.caller) });
      this.timers.setTimeout(() => listener(queue), delay);
      if (this.hintFaultsOn && this.random.next() < f.hintDuplicate) {
        this.log.emit({ type: 'fault', at: this.scheduler.now(), kind: 'hint_duplicated', target: label(this.caller) });
        this.timers.setTimeout(() => listener(queue), delay + this.random.nextInt(200));
      }
    } });
    return subscription;
  }
}

/** A caller's name in traces: its worker id, or `producer` / `operator`. */
export function label(caller: Caller): string {
  return caller.kind === 'worker' ? caller.workerId : caller.kind;
}
