import { describe, expect, it } from '@jest/globals';
import { PgWakeListener } from '../../lib/store/postgres/pg-wake-listener.js';
import type { PgPool } from '../../lib/store/postgres/pg-executor.js';
import { settle } from '../support/manual-timers.js';

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

/** A pooled connection whose LISTEN waits until the test lets it through (a proxy that delays LISTEN). */
class FakeClient {
  readonly listen = deferred<{ rows: unknown[] }>();
  constructor() {
    this.listen.promise.catch(() => undefined); // no LISTEN may be waiting on it when it is destroyed
  }
  readonly releases: Array<boolean | undefined> = [];
  readonly queries: string[] = [];
  processID = 4242;
  private handlers = new Map<string, Array<(arg?: unknown) => void>>();

  query(config: { text: string }) {
    this.queries.push(config.text);
    if (this.releases.length > 0) return Promise.reject(new Error('Client was closed and is not queryable'));
    return this.listen.promise;
  }

  release(destroy?: boolean) {
    this.releases.push(destroy);
    // A destroyed connection fails its query in flight, as node-postgres does.
    if (destroy) this.listen.reject(new Error('Connection terminated'));
  }

  on(event: string, handler: (arg?: unknown) => void) {
    this.handlers.set(event, [...(this.handlers.get(event) ?? []), handler]);
  }

  removeAllListeners() {
    this.handlers.clear();
  }
}

function fakePool() {
  const clients: FakeClient[] = [];
  const checkouts: Array<ReturnType<typeof deferred<FakeClient>>> = [];
  const pool = {
    connect: () => {
      const checkout = deferred<FakeClient>();
      checkouts.push(checkout);
      return checkout.promise;
    },
    query: () => Promise.reject(new Error('unused')),
  } as unknown as PgPool;
  /** Hands out the next connection the listener asked for. */
  const grant = () => {
    const client = new FakeClient();
    clients.push(client);
    checkouts.shift()!.resolve(client);
    return client;
  };
  return { pool, clients, checkouts, grant };
}

describe('issue 19 item 3: the wake listener never keeps a connection after close', () => {
  it('close during an in-flight LISTEN resolves at once and destroys that connection exactly once', async () => {
    const { pool, grant } = fakePool();
    const listener = new PgWakeListener(pool, 'ch');
    listener.add(() => undefined);
    const client = grant();
    await settle();
    expect(client.queries).toEqual(['LISTEN "ch"']);
    expect(listener.holdsConnection).toBe(true);

    await listener.close();
    expect(client.releases).toEqual([true]);
    expect(listener.holdsConnection).toBe(false);

    // The delayed LISTEN comes back (or fails) afterwards: nothing is taken back up.
    client.listen.resolve({ rows: [] });
    await settle();
    expect(client.releases).toEqual([true]);
    expect(listener.holdsConnection).toBe(false);
    expect(listener.pid).toBeUndefined();
    expect(listener.connections).toBe(0);
  });

  it('a LISTEN that completes after close, without the connection failing, is still given up', async () => {
    const { pool, grant } = fakePool();
    const listener = new PgWakeListener(pool, 'ch');
    listener.add(() => undefined);
    const client = grant();
    await settle();
    // A connection that ignores the destroy and answers anyway (the race the issue saw): the listener keeps nothing.
    client.release = (destroy?: boolean) => void client.releases.push(destroy);
    await listener.close();
    client.listen.resolve({ rows: [] });
    await settle();
    expect(client.releases).toEqual([true]);
    expect(listener.pid).toBeUndefined();
    expect(listener.holdsConnection).toBe(false);
  });

  it('close while the pool is still checking a connection out releases that connection when it arrives', async () => {
    const { pool, grant, checkouts } = fakePool();
    const listener = new PgWakeListener(pool, 'ch');
    listener.add(() => undefined);
    expect(checkouts).toHaveLength(1);
    await listener.close();
    const client = grant();
    await settle();
    expect(client.queries).toEqual([]);
    expect(client.releases).toEqual([false]); // never used, so back to the pool
    expect(listener.holdsConnection).toBe(false);
  });

  it('the last subscriber leaving gives the connection back, and a new one connects again', async () => {
    const { pool, grant } = fakePool();
    const listener = new PgWakeListener(pool, 'ch');
    const hint = () => undefined;
    listener.add(hint);
    const first = grant();
    first.listen.resolve({ rows: [] });
    await settle();
    expect(listener.pid).toBe(4242);

    listener.remove(hint);
    listener.disconnect();
    expect(first.releases).toEqual([true]);
    listener.add(hint);
    const second = grant();
    second.listen.resolve({ rows: [] });
    await settle();
    expect(listener.connections).toBe(2);
    expect(listener.holdsConnection).toBe(true);
    await listener.close();
    expect(second.releases).toEqual([true]);
  });
});
