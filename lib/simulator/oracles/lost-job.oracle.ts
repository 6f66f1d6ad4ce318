import type { SimEvent } from '../sim-event.js';
import { Oracle, type RunEnd } from './oracle.js';

/** Every job the producer was told is stored was stored, and is still there at the end. */
export class LostJobOracle extends Oracle {
  readonly name = 'no_lost_job';
  private readonly inserted = new Set<string>();
  private readonly acknowledged = new Set<string>();

  onEvent(event: SimEvent): void {
    if (event.type === 'write' && !event.before) this.inserted.add(event.after.id);
    if (event.type === 'ack') {
      for (const id of event.ids) {
        this.acknowledged.add(id);
        if (!this.inserted.has(id)) this.flag(`enqueue of ${id} was acknowledged but the job was never written`);
      }
    }
  }

  override finish(end: RunEnd): void {
    const present = new Set(end.rows.map((row) => row.id));
    for (const id of this.acknowledged) if (!present.has(id)) this.flag(`acknowledged job ${id} is gone`);
  }
}
