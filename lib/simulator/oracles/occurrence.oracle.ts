import { OccurrenceId } from '../../core/index.js';
import type { SimEvent } from '../sim-event.js';
import { Oracle } from './oracle.js';

/** One job per schedule occurrence, and its id is that occurrence's id. */
export class OccurrenceOracle extends Oracle {
  readonly name = 'one_job_per_occurrence';
  private readonly seen = new Map<string, string>();

  onEvent(event: SimEvent): void {
    if (event.type !== 'write' || event.before || event.after.scheduleId === null) return;
    const { id, scheduleId, scheduledFor } = event.after;
    const key = `${scheduleId}@${scheduledFor}`;
    const earlier = this.seen.get(key);
    if (earlier !== undefined) this.flag(`occurrence ${key} has two jobs: ${earlier} and ${id}`);
    this.seen.set(key, id);
    const expected = OccurrenceId.derive(scheduleId, new Date(scheduledFor));
    if (id !== expected) this.flag(`job ${id} minted for ${key} should have id ${expected}`);
  }
}
