import type { SimEvent } from '../sim-event.js';
import { Oracle } from './oracle.js';

interface Waits {
  readonly parents: readonly string[];
  readonly mode: string;
}

/**
 * No dependant runs early: a job with parents is released and first claimed only after every
 * parent is terminal, and, waiting `on_success`, only after every parent succeeded. A job an
 * operator replayed is judged no further, and neither is a parent an operator replayed: a replay
 * may legitimately bring a parent back after its dependant was released.
 */
export class DependencyOrderOracle extends Oracle {
  readonly name = 'dependants_not_early';
  private readonly waits = new Map<string, Waits>();
  private readonly state = new Map<string, string>();
  private readonly replayed = new Set<string>();

  onEvent(event: SimEvent): void {
    if (event.type === 'call') {
      if (event.op === 'jobEnqueueMany' && !event.error) {
        for (const input of event.args as { id: string; dependsOn: string[]; dependencyMode: string }[]) {
          if (input.dependsOn.length > 0 && !this.waits.has(input.id)) this.waits.set(input.id, { parents: input.dependsOn, mode: input.dependencyMode });
        }
      }
      if (event.op === 'jobReplay' && !event.error) this.replayed.add((event.args as [{ jobId: string }])[0].jobId);
      return;
    }
    if (event.type !== 'write') return;
    const { before, after } = event;
    this.state.set(after.id, after.state);
    const waits = this.waits.get(after.id);
    if (!waits || !before || this.replayed.has(after.id)) return;
    const released = before.state === 'awaiting_parents' && after.state === 'scheduled';
    const firstClaim = after.state === 'running' && before.state !== 'running' && after.attempt === 1;
    if (!released && !firstClaim) return;
    for (const parent of waits.parents) {
      if (this.replayed.has(parent)) continue;
      const state = this.state.get(parent);
      const ok = waits.mode === 'on_success' ? state === 'succeeded' : state !== undefined && ['succeeded', 'dead_lettered', 'cancelled', 'quarantined'].includes(state);
      if (!ok) this.flag(`${after.id} ${released ? 'was released' : 'started'} while parent ${parent} was ${state ?? 'unknown'} (${waits.mode})`);
    }
  }
}
