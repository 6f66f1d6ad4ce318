import type { Schedule } from '../../store/index.js';
import type { RowView, SimEvent, SimListener } from '../sim-event.js';

/** The end of a run, as the oracles' final checks see it. */
export interface RunEnd {
  readonly now: number;
  /** Every stored job. */
  readonly rows: readonly RowView[];
  /** Every stored schedule, as it stands at the end (hand-built histories may leave it out). */
  readonly schedules?: readonly Schedule[];
  /** True when all work reached a terminal state within the liveness bound. */
  readonly drained: boolean;
}

/** One oracle's verdict: its name and how many violations it counted, with the first few. */
export interface OracleReport {
  readonly name: string;
  readonly violations: number;
  readonly examples: readonly string[];
}

/**
 * A named check over a run's history. It reads events as they happen and counts each violation
 * of its one property; a clean run counts zero everywhere.
 */
export abstract class Oracle implements SimListener {
  abstract readonly name: string;
  private count = 0;
  private readonly firstFew: string[] = [];

  abstract onEvent(event: SimEvent): void;

  /** Checks that need the whole run. */
  finish(_end: RunEnd): void {}

  report(): OracleReport {
    return { name: this.name, violations: this.count, examples: [...this.firstFew] };
  }

  protected flag(message: string): void {
    this.count += 1;
    if (this.firstFew.length < 5) this.firstFew.push(message);
  }
}

/** The states a job never leaves, as the oracles check them. */
export const TERMINAL = new Set(['succeeded', 'dead_lettered', 'cancelled', 'quarantined']);

/** A row the store wrote, as its probe reported it. */
export type WriteEvent = Extract<SimEvent, { type: 'write' }>;
/** A store call a node, the producer or the operator made. */
export type CallEvent = Extract<SimEvent, { type: 'call' }>;

/** The worker a call came from, or null for the producer and the operator. */
export function workerOf(call: CallEvent): string | null {
  return call.caller.kind === 'worker' ? call.caller.workerId : null;
}

/** Collects the writes of the call in progress; the call's own event closes the group. */
export abstract class PerCallOracle extends Oracle {
  private writes: WriteEvent[] = [];

  onEvent(event: SimEvent): void {
    if (event.type === 'write') this.writes.push(event);
    else if (event.type === 'call') {
      const writes = this.writes;
      this.writes = [];
      this.onCall(event, writes);
    }
  }

  protected abstract onCall(call: CallEvent, writes: readonly WriteEvent[]): void;
}
