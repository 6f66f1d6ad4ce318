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
 */
export class PgWakeListener {
  private client: ListenClient | undefined;
  private closed = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly listeners = new Set<WakeListener>();
  private readonly connectedWaiters: Array<(pid: number) => void> = [];
  /** How many times a LISTEN connection was established. */
  connections = 0;

  constructor(
    private readonly pool: PgPool,
    private readonly channel: string,
  ) {}

  get size(): number {
    return this.listeners.size;
  }

  /** The backend pid of the current LISTEN connection, if connected. */
  get pid(): number | undefined {
    return this.client?.processID;
  }

  add(listener: WakeListener): void {
    this.listeners.add(listener);
    if (this.listeners.size === 1 && !this.client) void this.connect(0);
  }

  remove(listener: WakeListener): void {
    this.listeners.delete(listener);
  }

  /** Resolves with the backend pid on the next successful connection (for tests and diagnostics). */
  nextConnection(): Promise<number> {
    return new Promise((resolve) => this.connectedWaiters.push(resolve));
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = undefined;
    if (client) {
      client.removeAllListeners();
      client.on('error', () => undefined);
      client.release(true);
    }
  }

  private async connect(attempt: number): Promise<void> {
    if (this.closed || this.client) return;
    let client: ListenClient | undefined;
    try {
      client = (await this.pool.connect()) as unknown as ListenClient;
      if (this.closed) {
        client.release();
        return;
      }
      const current = client;
      current.on('notification', (message) => this.emit(message.payload ?? ANY_QUEUE));
      current.on('error', () => this.lost(current));
      current.on('end', () => this.lost(current));
      await current.query({ text: `LISTEN "${this.channel}"` });
      this.client = current;
      this.connections += 1;
      if (this.connections > 1) this.emit(ANY_QUEUE);
      for (const waiter of this.connectedWaiters.splice(0)) waiter(current.processID ?? 0);
    } catch {
      if (client) {
        client.removeAllListeners();
        client.on('error', () => undefined);
        client.release(true);
      }
      this.scheduleReconnect(attempt + 1);
    }
  }

  private lost(client: ListenClient): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.removeAllListeners();
    client.on('error', () => undefined);
    client.release(true);
    this.scheduleReconnect(0);
  }

  private scheduleReconnect(attempt: number): void {
    if (this.closed || this.listeners.size === 0) return;
    const delay = Math.min(5_000, 50 * 2 ** attempt);
    this.retryTimer = setTimeout(() => void this.connect(attempt), delay);
    this.retryTimer.unref?.();
  }

  private emit(queue: string): void {
    for (const listener of this.listeners) {
      try {
        listener(queue);
      } catch {
        // Hints are advice; a failing listener must not stop the others.
      }
    }
  }
}
