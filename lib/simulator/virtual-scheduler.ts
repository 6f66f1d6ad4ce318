import type { Clock } from '../core/index.js';
import type { Timers } from '../worker/index.js';

interface Entry {
  at: number;
  readonly seq: number;
  readonly run: () => void;
  cancelled: boolean;
}

/**
 * Virtual time for a whole simulated cluster: one queue of callbacks ordered by instant, then by
 * the order they were scheduled. Nothing runs in parallel and nothing reads the wall clock, so a
 * run is a pure function of its seed.
 */
export class VirtualScheduler implements Clock {
  private heap: Entry[] = [];
  private seq = 0;
  private current: number;

  constructor(start: number) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  /** Runs `run` at `now() + delayMs` (never earlier than now). */
  at(delayMs: number, run: () => void): Entry {
    const entry: Entry = { at: this.current + Math.max(0, delayMs), seq: this.seq++, run, cancelled: false };
    this.push(entry);
    return entry;
  }

  cancel(entry: Entry): void {
    entry.cancelled = true;
  }

  /**
   * Fires callbacks in order until `until` or until `stop()` holds, letting every promise callback
   * they start settle before the next one fires (all simulated I/O goes through this queue, so
   * nothing else can be pending).
   */
  async run(until: number, stop: () => boolean = () => false): Promise<void> {
    while (this.heap.length > 0 && !stop()) {
      const next = this.heap[0]!;
      if (next.at > until) break;
      this.pop();
      if (next.cancelled) continue;
      this.current = Math.max(this.current, next.at);
      next.run();
      await drainMicrotasks();
    }
    if (!stop()) this.current = Math.max(this.current, until);
  }

  private push(entry: Entry): void {
    const heap = this.heap;
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  private pop(): void {
    const heap = this.heap;
    const last = heap.pop()!;
    if (heap.length === 0) return;
    heap[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && before(heap[l]!, heap[m]!)) m = l;
      if (r < heap.length && before(heap[r]!, heap[m]!)) m = r;
      if (m === i) break;
      [heap[i], heap[m]] = [heap[m]!, heap[i]!];
      i = m;
    }
  }
}

function before(a: Entry, b: Entry): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

/** Every microtask queued so far (and every one those queue) runs before a macrotask does. */
function drainMicrotasks(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * One node's timers on the shared virtual time. A crash drops every pending callback and ignores
 * new ones; a pause holds callbacks that come due until it ends (a stopped process runs nothing),
 * then fires them in their original order.
 */
export class NodeTimers implements Timers {
  private readonly pending = new Set<Entry>();
  private crashed = false;
  private pausedUntil = -Infinity;

  constructor(private readonly scheduler: VirtualScheduler) {}

  get isCrashed(): boolean {
    return this.crashed;
  }

  isPaused(): boolean {
    return this.scheduler.now() < this.pausedUntil;
  }

  setTimeout(callback: () => void, ms: number): unknown {
    if (this.crashed) return undefined;
    const entry = this.scheduler.at(ms, () => this.fire(entry, callback));
    this.pending.add(entry);
    return entry;
  }

  /**
   * Runs `callback` on this node as soon as it can: at this instant after what is already queued
   * for it, after a pause, or never after a crash.
   */
  defer(callback: () => void): void {
    this.setTimeout(callback, 0);
  }

  clearTimeout(handle: unknown): void {
    if (handle === undefined) return;
    const entry = handle as Entry;
    this.scheduler.cancel(entry);
    this.pending.delete(entry);
  }

  pause(untilAt: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, untilAt);
  }

  crash(): void {
    this.crashed = true;
    for (const entry of this.pending) this.scheduler.cancel(entry);
    this.pending.clear();
  }

  private fire(entry: Entry, callback: () => void): void {
    this.pending.delete(entry);
    if (this.crashed) return;
    if (this.isPaused()) {
      // Held until the pause ends; re-queued in firing order, so relative order is kept.
      const held = this.scheduler.at(this.pausedUntil - this.scheduler.now(), () => this.fire(held, callback));
      this.pending.add(held);
      return;
    }
    callback();
  }
}
