import type { OutcomeResult } from './job-store.types.js';

/**
 * Wakes this process's workers when an outcome may have freed room for jobs a limit held back.
 * A held-back job waits for a slot or a start to free, and a slot frees with an outcome write,
 * which sends no wake-up hint to the queue: without this, a key capped at 1 would start one job
 * per poll interval. The claim path says whether held-back jobs exist (`seen`); while they do,
 * every applied outcome wakes the workers, at the cost of one claim that may find nothing. A
 * claim that stopped short of a backlog it was parking asks for another at once (`again`). Both
 * are hints for this process only; other processes take the room at their next poll or hint.
 */
export class HeldWake {
  private held = false;

  constructor(private readonly wake: () => void) {}

  /** What the last claim saw: held-back jobs exist, or not. */
  seen(held: boolean): void {
    this.held = held;
  }

  /** A claim stopped short: claim again now. */
  again(): void {
    this.wake();
  }

  /** After an outcome write committed: wakes the workers if it applied while held-back jobs wait. */
  applied(results: readonly OutcomeResult[]): void {
    if (this.held && results.some((result) => result.status === 'applied')) this.wake();
  }
}
