import { ANY_QUEUE, type WakeListener } from '../wake-hints.js';
import type { PgPool, PgQueryable } from './pg-executor.js';

type ListenClient = PgQueryable & {
  release(destroy?: boolean): void;
  on(event: 'notification', listener: (message: { payload?: string }) => void): void;
  on(event: 'error' | 'end', listener: (error?: Error) => void): void;
  removeAllListeners(): void;
  processID?: number;
};

/**
 * Holds one pooled connection in LISTEN on the store's channel and fans notifications out to
 * subscribers. When the connection dies (a restart, `pg_terminate_backend`, a network cut) it
 * reconnects with backoff and tells subscribers to look at every queue, because hints sent in the
 * gap are gone. Polling stays the source of truth; this only cuts latency.
 *
 * Closing never waits for the connection: a connection still being checked out, or whose LISTEN
 * has not come back (a slow proxy, a stalled network), is destroyed at once, and one that arrives
 * later is destroyed on arrival. Otherwise it would stay checked out of the pool for good, and the
 * DataSource's pool could never end.
 */
export class PgWakeListener {
  private client: ListenClient | undefined;
  /** The connection whose LISTEN is in flight. */
  private pending: ListenClient | undefined;
  private closed = false;
  /** Bumped by every disconnect, so a connection attempt that outlived one gives its client up. */
  private generation = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly listeners = new Set<WakeListener>();
  private readonly connectedWaiters: Array<(pid: number) => void> = [];
  private readonly released = new WeakSet<ListenClient>();
  /** How many times a LISTEN connection was established. */
  connections = 0;

  /**
   * `pool` is where the LISTEN connection comes from: the DataSource's pool, a pool of one straight
   * to the server behind a transaction pooler (`listenUrl`), or null to listen nowhere (polling
   * alone), when hints still reach this process's own subscribers through {@link emit}.
   */
  constructor(
    private readonly pool: PgPool | null,
    private readonly channel: string,
  ) {}

  /** Whether hints from other processes arrive at all (false when polling alone). */
  get listening(): boolean {
    return this.pool !== null;
  }

  get size(): number {
    return this.listeners.size;
  }

  /** The backend pid of the current LISTEN connection, if connected. */
  get pid(): number | undefined {
    return this.client?.processID;
  }

  /** True while a connection is checked out or connected (for tests and diagnostics). */
  get holdsConnection(): boolean {
    return this.client !== undefined || this.pending !== undefined;
  }

  add(listener: WakeListener): void {
    this.listeners.add(listener);
    if (this.listeners.size === 1 && this.pool && !this.client && !this.pending) void this.connect(0);
  }

  remove(listener: WakeListener): void {
    this.listeners.delete(listener);
  }

  /** Resolves with the backend pid on the next successful connection (for tests and diagnostics). */
  nextConnection(): Promise<number> {
    return new Promise((resolve) => this.connectedWaiters.push(resolve));
  }

  /** Calls `callback` once on the next successful connection; the returned function cancels it. */
  onNextConnection(callback: () => void): () => void {
    const waiter = () => callback();
    this.connectedWaiters.push(waiter);
    return () => {
      const at = this.connectedWaiters.indexOf(waiter);
      if (at !== -1) this.connectedWaiters.splice(at, 1);
    };
  }

  /** Gives the connection back (or up, mid-LISTEN); a later {@link add} connects again. */
  disconnect(): void {
    this.generation += 1;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const { client, pending } = this;
    this.client = undefined;
    this.pending = undefined;
    if (client) this.discard(client);
    if (pending) this.discard(pending);
  }

  /** Disconnects for good. Resolves at once: nothing here waits on the server. */
  async close(): Promise<void> {
    this.closed = true;
    this.disconnect();
  }

  private async connect(attempt: number): Promise<void> {
    if (this.closed || this.client || this.pending || !this.pool) return;
    const generation = this.generation;
    const current = () => !this.closed && this.generation === generation;
    let client: ListenClient | undefined;
    try {
      client = (await this.pool.connect()) as unknown as ListenClient;
      // Nothing was sent on it yet, so the pool can have it back.
      if (!current()) return this.discard(client, false);
      const candidate = client;
      candidate.on('notification', (message) => this.emit(message.payload ?? ANY_QUEUE));
      candidate.on('error', () => this.lost(candidate));
      candidate.on('end', () => this.lost(candidate));
      this.pending = candidate;
      await candidate.query({ text: `LISTEN "${this.channel}"` });
      // Closed (or disconnected) while LISTEN was in flight: that already destroyed it.
      if (!current() || this.pending !== candidate) return this.discard(candidate);
      this.pending = undefined;
      this.client = candidate;
      this.connections += 1;
      if (this.connections > 1) this.emit(ANY_QUEUE);
      for (const waiter of this.connectedWaiters.splice(0)) waiter(candidate.processID ?? 0);
    } catch {
      if (client) {
        if (this.pending === client) this.pending = undefined;
        this.discard(client);
      }
      if (current()) this.scheduleReconnect(attempt + 1);
    }
  }

  private lost(client: ListenClient): void {
    if (this.pending === client) return; // the failed LISTEN reconnects from connect()
    if (this.client !== client) return;
    this.client = undefined;
    this.discard(client);
    this.scheduleReconnect(0);
  }

  /**
   * Releases a connection once, however many paths reach it (node-postgres throws on a second
   * release). One that may be in LISTEN, or mid-query, is destroyed rather than pooled.
   */
  private discard(client: ListenClient, destroy = true): void {
    if (this.released.has(client)) return;
    this.released.add(client);
    client.removeAllListeners();
    client.on('error', () => undefined);
    client.release(destroy);
  }

  private scheduleReconnect(attempt: number): void {
    if (this.closed || this.listeners.size === 0) return;
    const delay = Math.min(5_000, 50 * 2 ** attempt);
    this.retryTimer = setTimeout(() => void this.connect(attempt), delay);
    this.retryTimer.unref?.();
  }

  /** Hands a hint to every listener, as a NOTIFY would (also the store's own hints: rate-wake.ts). */
  emit(queue: string): void {
    for (const listener of this.listeners) {
      try {
        listener(queue);
      } catch {
        // Hints are advice; a failing listener must not stop the others.
      }
    }
  }
}
