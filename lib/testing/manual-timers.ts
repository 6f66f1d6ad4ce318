import { ManualClock } from '../core/index.js';
import type { Timers } from '../worker/index.js';

interface Pending {
  readonly id: number;
  readonly at: number;
  readonly callback: () => void;
}

/**
 * Lets every promise callback already queued run, and those they queue: they all run before the
 * next macrotask. The stores the kit drives (memory, and SQLite through better-sqlite3) answer
 * within that, so after it a claim or an outcome write sent before has landed.
 */
export function settleTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Timers on a {@link ManualClock}: nothing fires until the test says so, and then callbacks fire
 * in time order with the clock set to each one's instant. A {@link WorkerNode} given these timers
 * arms no real timer at all, so a test that closes its module leaves no handle open, and a worker
 * shares one notion of time with a store on the same clock.
 */
export class ManualTimers implements Timers {
  private pending: Pending[] = [];
  private nextId = 1;
  /** Called whenever a callback is queued: how the kit notices that an attempt it waits for moved on. */
  onQueued: (() => void) | undefined;

  constructor(readonly clock: ManualClock = new ManualClock()) {}

  setTimeout(callback: () => void, ms: number): unknown {
    const timer = { id: this.nextId++, at: this.clock.now() + Math.max(0, ms), callback };
    this.pending.push(timer);
    this.onQueued?.();
    return timer.id;
  }

  clearTimeout(handle: unknown): void {
    this.pending = this.pending.filter((t) => t.id !== handle);
  }

  /** Queued for the current instant, after what is already queued for it (the node's claims and outcome writes go this way). */
  defer(callback: () => void): void {
    this.setTimeout(callback, 0);
  }

  /** Callbacks waiting, due or not. */
  get size(): number {
    return this.pending.length;
  }

  /** The instant of the earliest callback waiting, or null. */
  nextAt(): number | null {
    return this.earliest()?.at ?? null;
  }

  /**
   * Fires the earliest callback due at or before `until` (default: now), first moving the clock to
   * its instant, then lets the promise callbacks it started run. False when none was due.
   */
  async fireNext(until = this.clock.now()): Promise<boolean> {
    const due = this.earliest();
    if (!due || due.at > until) return false;
    this.pending = this.pending.filter((t) => t !== due);
    if (due.at > this.clock.now()) this.clock.set(due.at);
    due.callback();
    await settleTurn();
    return true;
  }

  /** Moves time forward by `ms`, firing each callback due on the way at its instant. */
  async advance(ms: number): Promise<void> {
    const until = this.clock.now() + ms;
    await settleTurn();
    while (await this.fireNext(until));
    if (until > this.clock.now()) this.clock.set(until);
  }

  /**
   * Moves the clock straight to `at`, then fires what is due by then, earliest first, each at `at`.
   * A periodic callback (a poll, a heartbeat, a sweep) fires once, however long the gap, where
   * `advance` fires it at every step; so a jump costs the same across a minute or a year. Only for
   * a moment when nothing in flight needs those steps: drain jumps between passes, once every
   * attempt has settled, so no lease waits for a heartbeat.
   */
  async jumpTo(at: number): Promise<void> {
    await settleTurn();
    if (at > this.clock.now()) this.clock.set(at);
    while (await this.fireNext(at));
  }

  private earliest(): Pending | undefined {
    let first: Pending | undefined;
    for (const t of this.pending) if (!first || t.at < first.at || (t.at === first.at && t.id < first.id)) first = t;
    return first;
  }
}
