import { createHash } from 'node:crypto';
import type { EntityManager } from 'typeorm';

/** The slice of node-postgres this adapter uses: a pool, or one client checked out of it. */
export interface PgQueryable {
  query(config: { text: string; values?: unknown[]; name?: string }): Promise<{ rows: unknown[] }>;
}

export interface PgPool extends PgQueryable {
  connect(): Promise<PgQueryable & { release(destroy?: boolean): void }>;
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
