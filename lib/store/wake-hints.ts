import { AsyncResource } from 'node:async_hooks';
import type { WakeListener, WakeSubscription } from './job-store.types.js';

/** The queue name of a hint that concerns every queue (after a reconnect, or a relinquish). */
export const ANY_QUEUE = '*';

/**
 * The payload of a hint that jobs finished (PostgreSQL's NOTIFY from the statement that finished
 * them). Never a queue name, which starts with a letter or digit, so a worker's wake listener
 * passes it by.
 */
export const FINISH_HINT = '!';

export type { WakeListener, WakeSubscription } from './job-store.types.js';

/**
 * In-process fan-out of wake-up hints, for stores whose hints never leave the process. Each
 * listener runs in the async context it subscribed from, not the writer's: a hint sent from inside
 * a caller's transaction must not make the worker's claim look like part of that transaction.
 */
export class WakeHub {
  private readonly listeners = new Set<WakeListener>();

  emit(queue: string): void {
    for (const listener of this.listeners) {
      try {
        listener(queue);
      } catch {
        // A hint is advice; a listener that throws must not break the write that sent it.
      }
    }
  }

  subscribe(listener: WakeListener): WakeSubscription {
    const bound = AsyncResource.bind(listener);
    this.listeners.add(bound);
    return {
      close: async () => {
        this.listeners.delete(bound);
      },
    };
  }
}
