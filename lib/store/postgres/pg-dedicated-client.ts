import type { PgExecutor, PgPool, PgQueryable, StatementListener } from './pg-executor.js';

type DedicatedClient = PgQueryable & {
  release(destroy?: boolean): void;
  on(event: 'error', listener: (error: Error) => void): void;
  removeAllListeners(): void;
};

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
  ) {}

  query<R>(text: string, values: readonly unknown[] = []): Promise<R[]> {
    const run = this.chain.then(() => this.send<R>(text, values));
    this.chain = run.catch(() => undefined);
    return run;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.chain;
    this.drop(false);
  }

  private async send<R>(text: string, values: readonly unknown[]): Promise<R[]> {
    if (this.closed) throw new Error('The store is closed.');
    if (!this.client) {
      const client = (await this.pool.connect()) as unknown as DedicatedClient;
      client.on('error', () => {
        if (this.client === client) this.drop(true);
      });
      this.client = client;
    }
    this.listener?.(text);
    try {
      const result = await this.client.query({ text, values: values as unknown[] });
      return result.rows as R[];
    } catch (error) {
      this.drop(true);
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
