import { ANY_QUEUE } from './wake-hints.js';

/** More pending wakes than this is a flood of claims: the latest wake then stands for the ones after it. */
const MAX_PENDING = 1_000;

/**
 * Wakes this process's workers when a rate limit a claim just spent frees its next start. Jobs
 * passed over for their rate are due, and nothing else would tell a worker when they may start:
 * no write happens, so no hint is sent, and the next poll can be up to a poll interval late, or
 * land just before the start frees and miss it by a whole interval. A claim that took the last
 * free starts of a key knows when the next one frees (measured on the database's clock, as a delay
 * from its own now(), so clock skew between node and database does not matter) and asks for a
 * wake then.
 *
 * Every wake asked for is kept, not only the earliest: a claim an early wake causes passes a
 * spent key by without reading its starts, so it cannot ask again for the key's later wake. One
 * timer runs, for the earliest; it never holds the process open.
 */
export class RateWake {
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** Instants (Date.now() ms) to wake at, ascending, without repeats. */
  private pending: number[] = [];
  private closed = false;

  constructor(private readonly emit: (queue: string) => void) {}

  /** Wakes the listeners in `delayMs` (at least 1 ms), besides any wake already set. */
  after(delayMs: number): void {
    if (this.closed || !Number.isFinite(delayMs)) return;
    const due = Date.now() + Math.max(1, Math.ceil(delayMs));
    let at = this.pending.findIndex((pending) => pending >= due);
    if (this.pending[at] === due) return;
    if (at === -1) at = this.pending.length;
    if (this.pending.length >= MAX_PENDING) {
      // Full: the latest pending wake moves to the later of the two, so an earlier ask is never lost.
      if (at === this.pending.length) {
        this.pending[at - 1] = due;
        return;
      }
      this.pending.pop();
    }
    this.pending.splice(at, 0, due);
    if (at === 0) this.arm();
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.pending = [];
  }

  /** (Re)starts the one timer for the earliest pending wake. */
  private arm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const next = this.pending[0];
    if (next === undefined) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      const now = Date.now();
      // Wakes within a millisecond of each other are one.
      while (this.pending.length > 0 && this.pending[0]! <= now + 1) this.pending.shift();
      this.emit(ANY_QUEUE);
      this.arm();
    }, Math.max(0, next - Date.now()));
    this.timer.unref?.();
  }
}
