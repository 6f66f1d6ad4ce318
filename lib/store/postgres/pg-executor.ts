import { createHash } from 'node:crypto';
import type { EntityManager } from 'typeorm';

/** The slice of node-postgres this adapter uses: a pool, or one client checked out of it. */
export interface PgQueryable {
  query(config: { text: string; values?: unknown[]; name?: string }): Promise<{ rows: unknown[] }>;
}

/** A connection checked out of the pool. `release(error)` discards it instead of reusing it. */
export type PgPooledClient = PgQueryable & {
  release(destroy?: boolean | Error): void;
  on(event: 'error', listener: (error: Error) => void): unknown;
  removeListener(event: 'error', listener: (error: Error) => void): unknown;
};

export interface PgPool extends PgQueryable {
  connect(): Promise<PgPooledClient>;
}

/**
 * Runs `work` on one connection checked out of the pool, and gives it back. While it is checked
 * out nobody else listens for its errors, and node-postgres emits 'error' when the server ends the
 * connection (a restart, pg_terminate_backend), even after the query in flight has failed: without
 * a listener that event would crash the process. A connection that died is discarded.
 */
export async function withPooledClient<T>(pool: PgPool, work: (client: PgPooledClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let lost: Error | undefined;
  const onError = (error: Error) => {
    lost ??= error;
  };
  client.on('error', onError);
  try {
    return await work(client);
  } finally {
    // The pool re-attaches its own listener synchronously on release, so no event falls in between.
    client.removeListener('error', onError);
    client.release(lost);
  }
}

/**
 * Runs `work` in one short transaction on a pooled connection: BEGIN, then COMMIT if it returns,
 * ROLLBACK if it throws. The connection is checked out through {@link withPooledClient}.
 */
export function withPooledTransaction<T>(pool: PgPool, work: (client: PgPooledClient) => Promise<T>): Promise<T> {
  return withPooledClient(pool, async (client) => {
    let ok = false;
    try {
      await client.query({ text: 'BEGIN' });
      const result = await work(client);
      await client.query({ text: 'COMMIT' });
      ok = true;
      return result;
    } finally {
      if (!ok) await client.query({ text: 'ROLLBACK' }).catch(() => undefined);
    }
  });
}

/** Receives every statement an adapter sends, e.g. to count round trips in tests. */
export type StatementListener = (text: string) => void;

/** Runs SQL for the adapter. One implementation sends to the pool, the other into a caller's transaction. */
export interface PgExecutor {
  query<R>(text: string, values?: readonly unknown[]): Promise<R[]>;
}

const names = new Map<string, string>();

/** A stable prepared-statement name per SQL text, so each pooled connection parses it once. */
function statementName(text: string): string {
  let name = names.get(text);
  if (!name) {
    name = `ds_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
    names.set(text, name);
  }
  return name;
}

/** Sends named (prepared) statements on whichever pooled connection is free. */
export class PoolExecutor implements PgExecutor {
  constructor(
    private readonly target: PgQueryable,
    private readonly listener?: StatementListener,
  ) {}

  async query<R>(text: string, values: readonly unknown[] = []): Promise<R[]> {
    this.listener?.(text);
    const result = await this.target.query({ name: statementName(text), text, values: values as unknown[] });
    return result.rows as R[];
  }
}

/** Sends statements through a TypeORM EntityManager, inside the transaction it already has open. */
export class ManagerExecutor implements PgExecutor {
  constructor(
    private readonly manager: EntityManager,
    private readonly listener?: StatementListener,
  ) {}

  async query<R>(text: string, values: readonly unknown[] = []): Promise<R[]> {
    this.listener?.(text);
    const result = await this.manager.queryRunner!.query(text, values as unknown[], true);
    return result.records as R[];
  }
}
