import type { SimEvent } from '../sim-event.js';
import { Oracle, TERMINAL, type RunEnd } from './oracle.js';

/** Once faults stop, every job reaches a terminal state within the run's stated bound. */
export class LivenessOracle extends Oracle {
  readonly name = 'liveness';

  onEvent(_event: SimEvent): void {}

  override finish(end: RunEnd): void {
    if (end.drained) return;
    for (const row of end.rows) {
      if (!TERMINAL.has(row.state)) this.flag(`${row.id} is still ${row.state} (attempt ${row.attempt} of ${row.maxAttempts}) after the liveness bound`);
    }
    if (end.rows.every((row) => TERMINAL.has(row.state))) this.flag('the run did not drain within the liveness bound');
  }
}
