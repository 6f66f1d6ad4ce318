import { ANY_QUEUE } from './wake-hints.js';

/**
 * Wakes this process's workers when a rate limit a claim just spent frees its next start. Jobs
 * passed over for their rate are due, and nothing else would tell a worker when they may start:
 * no write happens, so no hint is sent, and the next poll can be up to a poll interval late, or
 * land just before the start frees and miss it by a whole interval. A claim that took the last
 * free starts of a key knows when the next one frees (measured on the database's clock, as a delay
 * from its own now(), so clock skew between node and database does not matter) and asks for a
 * wake then. One timer: the earliest wake asked for wins; it never holds the process open.
 */
export class RateWake {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private due = Number.POSITIVE_INFINITY;
  private closed = false;

  constructor(private readonly emit: (queue: string) => void) {}

  /** Wakes the listeners in `delayMs` (at least 1 ms), unless an earlier wake is already set. */
  after(delayMs: number): void {
    if (this.closed || !Number.isFinite(delayMs)) return;
    const due = Date.now() + Math.max(1, Math.ceil(delayMs));
    if (due >= this.due) return;
    if (this.timer) clearTimeout(this.timer);
    this.due = due;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.due = Number.POSITIVE_INFINITY;
      this.emit(ANY_QUEUE);
    }, due - Date.now());
    this.timer.unref?.();
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
