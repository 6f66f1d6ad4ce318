import type { Timers } from './timers.js';

/** A node's timers by name: repeating ones and one-shots, each cancelled by name, and all at once on stop. */
export class NamedTimers {
  private readonly handles = new Map<string, unknown>();

  constructor(private readonly timers: Timers) {}

  /** Calls `tick` every `intervalMs` until the timer is cancelled (a tick may cancel it). */
  every(name: string, intervalMs: number, tick: () => void): void {
    const schedule = () => {
      this.handles.set(
        name,
        this.timers.setTimeout(() => {
          if (!this.handles.has(name)) return;
          tick();
          if (this.handles.has(name)) schedule();
        }, intervalMs),
      );
    };
    schedule();
  }

  /** Calls `fire` once after `delayMs`, unless the timer is cancelled first. */
  once(name: string, delayMs: number, fire: () => void): void {
    this.handles.set(name, this.timers.setTimeout(fire, delayMs));
  }

  cancel(name: string): void {
    const handle = this.handles.get(name);
    if (handle === undefined) return;
    this.timers.clearTimeout(handle);
    this.handles.delete(name);
  }

  cancelAll(): void {
    for (const name of [...this.handles.keys()]) this.cancel(name);
  }
}
