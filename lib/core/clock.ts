/** A source of the current instant, in milliseconds since the Unix epoch. */
export interface Clock {
  now(): number;
}

/**
 * A clock that only moves when told to. The in-memory store and the simulator run on it, so a test
 * can expire a lease by advancing time instead of sleeping.
 */
export class ManualClock implements Clock {
  constructor(private current = Date.UTC(2030, 0, 1)) {}

  now(): number {
    return this.current;
  }

  /** Moves time forward by `ms` (never backwards). */
  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError('ManualClock.advance needs a finite, non-negative number of milliseconds.');
    this.current += ms;
  }

  /** Jumps to an instant at or after the current one. */
  set(instant: number): void {
    if (!Number.isFinite(instant) || instant < this.current) throw new RangeError('ManualClock.set cannot move time backwards.');
    this.current = instant;
  }
}
