import type { PgPool } from './pg-executor.js';

type EndablePool = PgPool & { end?: (...args: unknown[]) => unknown };

const callbacksByPool = new WeakMap<PgPool, Set<() => void>>();

/**
 * Calls `onEnd` when the pool's owner ends it (TypeORM's `DataSource.destroy()` does), just before
 * the pool starts waiting for its checked-out connections, and returns a function that stops it.
 *
 * Why: node-postgres ends a pool only once every connection checked out of it is back, and the
 * store keeps some out for good (heartbeats, LISTEN) or for as long as a statement runs. A host
 * that destroys its DataSource before closing the store would otherwise wait for them forever.
 * The pool has no event for this, so its `end` is wrapped, once per pool, on the pool object only.
 */
export function onPoolEnd(pool: PgPool, onEnd: () => void): () => void {
  let callbacks = callbacksByPool.get(pool);
  if (!callbacks) {
    const registered = new Set<() => void>();
    callbacks = registered;
    callbacksByPool.set(pool, registered);
    const endable = pool as EndablePool;
    const end = endable.end;
    if (typeof end === 'function') {
      endable.end = function (this: unknown, ...args: unknown[]) {
        for (const callback of [...registered]) {
          try {
            callback();
          } catch {
            // Giving connections back is best effort; the pool's own end must still run.
          }
        }
        return end.apply(this, args);
      };
    }
  }
  callbacks.add(onEnd);
  return () => callbacks.delete(onEnd);
}
