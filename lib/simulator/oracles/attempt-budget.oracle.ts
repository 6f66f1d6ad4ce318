import type { SimEvent } from '../sim-event.js';
import { Oracle } from './oracle.js';

/** No job ever starts more attempts than it was given. */
export class AttemptBudgetOracle extends Oracle {
  readonly name = 'attempts_within_budget';

  onEvent(event: SimEvent): void {
    if (event.type === 'write' && event.after.attempt > event.after.maxAttempts) {
      this.flag(`${event.after.id} reached attempt ${event.after.attempt} of ${event.after.maxAttempts}`);
    }
  }
}
