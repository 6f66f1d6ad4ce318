import { ManualClock } from '../../lib/core/index.js';
import type { Timers } from '../../lib/worker/index.js';

/** Lets every pending promise callback run (they all drain before the next macrotask). */
export async function settle(rounds = 3): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((resolve) => setImmediate(resolve));
}

interface Pending {
  readonly id: number;
  readonly at: number;
  readonly callback: () => void;
}

/**
 * Timers on a ManualClock: nothing fires until the test advances time, and then callbacks fire in
 * time order with the clock set to each one's instant. Shared with a MemoryJobStore on the same
 * clock, a whole worker runs deterministically without a single sleep.
 */
export class ManualTimers implements Timers {
  private pending: Pending[] = [];
  private nextId = 1;

  constructor(readonly clock = new ManualClock()) {}

  setTimeout(callback: () => void, ms: number): unknown {
    const timer = { id: this.nextId++, at: this.clock.now() + Math.max(0, ms), callback };
    this.pending.push(timer);
    return timer.id;
  }

  clearTimeout(handle: unknown): void {
    this.pending = this.pending.filter((t) => t.id !== handle);
  }

  /** Moves time forward by `ms`, firing each due timer at its instant and settling promises after each. */
  async advance(ms: number): Promise<void> {
    const until = this.clock.now() + ms;
    for (;;) {
      await settle();
      const due = this.pending.filter((t) => t.at <= until).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (!due) break;
      this.pending = this.pending.filter((t) => t !== due);
      if (due.at > this.clock.now()) this.clock.set(due.at);
      due.callback();
    }
    if (until > this.clock.now()) this.clock.set(until);
    await settle();
  }

  /** Advances in steps until `done()` holds, failing after `limitMs` of virtual time. */
  async advanceUntil(done: () => boolean, stepMs = 100, limitMs = 600_000): Promise<void> {
    for (let waited = 0; !done(); waited += stepMs) {
      if (waited > limitMs) throw new Error(`condition not reached within ${limitMs} ms of virtual time`);
      await this.advance(stepMs);
    }
  }
}
