import type { SimEvent } from '../sim-event.js';
import { Oracle, TERMINAL } from './oracle.js';

/**
 * At most one unfinished job holds a (wire name, unique key) at any moment, whoever writes: an
 * enqueue, a replace, a claim, a replay. Checked after every write, from the rows as stored.
 */
export class UniqueKeyOracle extends Oracle {
  readonly name = 'one_holder_per_unique_key';
  /** The unfinished holder of each key. */
  private readonly holders = new Map<string, string>();
  /** Keys each job holds, so a write that ends or moves it frees the right one. */
  private readonly heldBy = new Map<string, string>();

  onEvent(event: SimEvent): void {
    if (event.type !== 'write') return;
    const { id, name, uniqueKey, state } = event.after;
    const previous = this.heldBy.get(id);
    if (previous !== undefined && this.holders.get(previous) === id) this.holders.delete(previous);
    this.heldBy.delete(id);
    if (uniqueKey === null || TERMINAL.has(state)) return;
    const slot = JSON.stringify([name, uniqueKey]);
    const other = this.holders.get(slot);
    if (other !== undefined && other !== id) this.flag(`${id} (${state}) holds ${slot} while ${other} still holds it`);
    this.holders.set(slot, id);
    this.heldBy.set(id, slot);
  }
}
