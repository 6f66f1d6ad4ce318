import type { PgExecutor, PgPool, PgQueryable, StatementListener } from './pg-executor.js';

type DedicatedClient = PgQueryable & {
  release(destroy?: boolean): void;
  on(event: 'error', listener: (error: Error) => void): void;
  removeAllListeners(): void;
};

/**
 * How long closing waits for a call in flight (a heartbeat) before it destroys the connection
 * under it. A heartbeat takes milliseconds; one still running after this waits on a server or a
 * network that is not answering, and shutdown must not wait on those.
 */
export const DEDICATED_CLOSE_WAIT_MS = 2_000;

/**
 * One pooled connection kept for a single purpose (heartbeats), so that attempts holding every
 * other connection in their transactions can never starve lease renewals. Calls run one at a time;
 * a broken connection is dropped and the next call checks out a fresh one.
 */
export class PgDedicatedClient implements PgExecutor {
  private client: DedicatedClient | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly pool: PgPool,
    private readonly listener?: StatementListener,
    private readonly closeWaitMs = DEDICATED_CLOSE_WAIT_MS,
  ) {}

  query<R>(text: string, values: readonly unknown[] = []): Promise<R[]> {
    const run = this.chain.then(() => this.send<R>(text, values));
    this.chain = run.catch(() => undefined);
    return run;
  }

  /**
   * Lets a call in flight finish for up to `closeWaitMs`, then gives the connection back, or
   * destroys it if the call is still running (which fails that call). Always resolves in time.
   */
  async close(): Promise<void> {
    this.closed = true;
    let timer: NodeJS.Timeout | undefined;
    const finished = await Promise.race([
      this.chain.then(() => true),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), this.closeWaitMs))),
    ]);
    clearTimeout(timer);
    this.drop(!finished);
  }

  private async send<R>(text: string, values: readonly unknown[]): Promise<R[]> {
    if (this.closed) throw new Error('The store is closed.');
    if (!this.client) {
      const client = (await this.pool.connect()) as unknown as DedicatedClient;
      if (this.closed) {
        // Checked out after close gave up waiting: nobody will use it, so hand it straight back.
        client.release();
        throw new Error('The store is closed.');
      }
      client.on('error', () => {
        if (this.client === client) this.drop(true);
      });
      this.client = client;
    }
    const client = this.client;
    this.listener?.(text);
    try {
      const result = await client.query({ text, values: values as unknown[] });
      return result.rows as R[];
    } catch (error) {
      if (this.client === client) this.drop(true);
      throw error;
    }
  }

  private drop(destroy: boolean): void {
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    client.removeAllListeners();
    client.on('error', () => undefined);
    client.release(destroy);
  }
}
