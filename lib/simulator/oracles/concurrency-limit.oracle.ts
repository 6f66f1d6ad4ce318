import type { RowView, SimEvent } from '../sim-event.js';
import { Oracle } from './oracle.js';

/**
 * No concurrency key ever has more live leases than its cap. Checked after every call on the
 * store's own rows; also counts the claims that left a key exactly at its cap (saturations), to
 * show the limit was actually exercised.
 */
export class ConcurrencyLimitOracle extends Oracle {
  readonly name = 'concurrency_limit';
  private readonly running = new Map<string, RowView>();
  saturations = 0;

  constructor(private readonly caps: ReadonlyMap<string, number>) {
    super();
  }

  onEvent(event: SimEvent): void {
    if (event.type === 'write') {
      if (event.after.state === 'running' && event.after.concurrencyKey !== null) this.running.set(event.after.id, event.after);
      else this.running.delete(event.after.id);
      return;
    }
    if (event.type !== 'call' || event.op !== 'jobClaim') return;
    const live = new Map<string, number>();
    for (const row of this.running.values()) {
      if (row.leasedUntil !== null && row.leasedUntil > event.at) live.set(row.concurrencyKey!, (live.get(row.concurrencyKey!) ?? 0) + 1);
    }
    for (const [key, count] of live) {
      const cap = this.caps.get(key);
      if (cap === undefined) continue;
      if (count > cap) this.flag(`${count} live leases on key ${key} (cap ${cap}) after a claim at ${event.at}`);
      else if (count === cap) this.saturations += 1;
    }
  }
}
