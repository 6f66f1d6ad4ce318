import { StoreUnavailableError } from '../../core/index.js';
import type { PgPool, PgPooledClient } from './pg-executor.js';
import { onPoolEnd } from './pg-pool-end.js';

/**
 * How long a pool's end waits for the store's statements in flight (and its heartbeat) before it
 * destroys their connections. A statement takes milliseconds; one still running after this waits
 * on a lock, a server or a network that is not answering, and shutdown must not wait on those.
 */
export const POOL_END_WAIT_MS = 2_000;

/**
 * The store's side of the host's pool: every connection the store checks out is held here until
 * it is given back. When the host ends the pool (destroys its DataSource), connections given back
 * within `closeWaitMs` end as usual; the rest are destroyed, which fails the statement still on
 * them, so the pool's end never waits on the store. Connections asked for after that are refused.
 */
export class HeldPool implements PgPool {
  private readonly held = new Map<PgPooledClient, Promise<void>>();
  private ending = false;

  constructor(
    private readonly pool: PgPool,
    private readonly closeWaitMs = POOL_END_WAIT_MS,
  ) {
    onPoolEnd(pool, () => void this.giveUp());
  }

  async connect(): Promise<PgPooledClient> {
    const client = await this.pool.connect();
    if (this.ending) {
      client.release();
      throw new StoreUnavailableError('The DataSource the store runs on is being destroyed; nothing more can run on it.');
    }
    // node-postgres sets `release` on every checkout, so this wrapper lasts one checkout. It gives
    // the connection back once, however many paths reach it (a second release throws there).
    const release = client.release;
    let given!: () => void;
    this.held.set(client, new Promise<void>((resolve) => (given = resolve)));
    let out = true;
    client.release = (destroy?: boolean | Error) => {
      if (!out) return;
      out = false;
      this.held.delete(client);
      given();
      release.call(client, destroy);
    };
    return client;
  }

  /**
   * One statement on a connection of its own, as the pool's own `query` sends it, but held. Like
   * that one it discards the connection after any error, not only a lost connection: a prepared
   * statement whose plan went stale (a migration changed a table under it) keeps failing on the
   * connection that prepared it, and the next statement then gets a fresh one.
   */
  async query(config: { text: string; values?: unknown[]; name?: string }): Promise<{ rows: unknown[] }> {
    const client = await this.connect();
    let failed: Error | undefined;
    const onError = (error: Error) => {
      failed ??= error;
    };
    client.on('error', onError);
    try {
      return await client.query(config);
    } catch (error) {
      failed ??= error as Error;
      throw error;
    } finally {
      client.removeListener('error', onError);
      client.release(failed);
    }
  }

  private async giveUp(): Promise<void> {
    this.ending = true;
    const waiting = [...this.held];
    if (waiting.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(waiting.map(([, given]) => given)),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, this.closeWaitMs))),
    ]);
    clearTimeout(timer);
    for (const [client] of waiting) client.release(true);
  }
}
