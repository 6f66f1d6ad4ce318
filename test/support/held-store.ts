import type { JobStore, MemoryJobStore } from '../../lib/store/index.js';

/** Store calls the test holds: each named method waits until the test lets it through. */
export class Holds {
  private readonly gates = new Map<string, { promise: Promise<void>; release: () => void; calls: number }>();
  /** Every store method the node called, in order. */
  readonly log: string[] = [];

  hold(method: string): void {
    let release!: () => void;
    const promise = new Promise<void>((resolve) => (release = resolve));
    this.gates.set(method, { promise, release, calls: 0 });
  }

  calls(method: string): number {
    return this.gates.get(method)?.calls ?? 0;
  }

  release(method: string): void {
    this.gates.get(method)?.release();
  }

  wrap(store: MemoryJobStore): JobStore {
    return new Proxy(store, {
      get: (target, prop, receiver) => {
        const value = Reflect.get(target, prop, receiver);
        if (typeof value !== 'function') return value;
        const gate = this.gates.get(String(prop));
        if (!gate) {
          return (...args: unknown[]) => {
            this.log.push(String(prop));
            return value.apply(target, args);
          };
        }
        return async (...args: unknown[]) => {
          this.log.push(String(prop));
          gate.calls += 1;
          await gate.promise;
          return value.apply(target, args);
        };
      },
    });
  }
}
