import type { SimEvent } from '../sim-event.js';
import { Oracle, type RunEnd } from './oracle.js';

/**
 * A node's graceful stop ends within its bound (`shutdownGraceMs` + STOP_OVERRUN_MS), whatever it
 * was waiting for: a store that withholds its calls, replies that never come, handlers that ignore
 * their abort. A stop still pending past its bound when the run ends counts too.
 */
export class ShutdownBoundOracle extends Oracle {
  readonly name = 'shutdown_bounded';
  private readonly pending = new Map<string, number>();

  constructor(private readonly boundMs: number) {
    super();
  }

  onEvent(event: SimEvent): void {
    if (event.type === 'fault' && event.kind === 'shutdown') this.pending.set(event.target, event.at);
    if (event.type !== 'stopped') return;
    const startedAt = this.pending.get(event.target);
    this.pending.delete(event.target);
    if (startedAt !== undefined && event.at - startedAt > this.boundMs) {
      this.flag(`${event.target} took ${event.at - startedAt} ms to stop, over its bound of ${this.boundMs} ms`);
    }
  }

  override finish(end: RunEnd): void {
    for (const [target, startedAt] of this.pending) {
      if (end.now - startedAt > this.boundMs) this.flag(`${target} had not stopped ${end.now - startedAt} ms after its stop began (bound ${this.boundMs} ms)`);
    }
  }
}
