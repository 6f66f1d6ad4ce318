import { createHash } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { StoreUnavailableError } from '../../core/index.js';

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

/**
 * The SQLSTATEs of a named statement that reached another server session than the one that
 * prepared it (26000: no such statement there; 42P05: one of that name is already there): what a
 * pooler in transaction mode does to prepared statements.
 */
const STATEMENT_CROSSED_SESSIONS = new Set(['26000', '42P05']);
const STATEMENT_CROSSED_MESSAGE =
  "A statement the store prepared on one server session reached another: the DataSource's connections go through a pooler in transaction mode (PgBouncer pool_mode = transaction); give the store poolMode: 'transaction' (docs/operations.md#pgbouncer).";

/**
 * Sends statements on whichever pooled connection is free: named (prepared once per connection)
 * when `prepared`, else unnamed, parsed and planned each time, which a pooler in transaction mode
 * needs (postgres-job-store.ts, `poolMode`).
 */
export class PoolExecutor implements PgExecutor {
  constructor(
    private readonly target: PgQueryable,
    private readonly listener?: StatementListener,
    private readonly prepared = true,
  ) {}

  async query<R>(text: string, values: readonly unknown[] = []): Promise<R[]> {
    this.listener?.(text);
    if (!this.prepared) return (await this.target.query({ text, values: values as unknown[] })).rows as R[];
    try {
      return (await this.target.query({ name: statementName(text), text, values: values as unknown[] })).rows as R[];
    } catch (error) {
      if (STATEMENT_CROSSED_SESSIONS.has((error as { code?: string })?.code ?? '')) throw new StoreUnavailableError(STATEMENT_CROSSED_MESSAGE, { cause: error });
      throw error;
    }
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
