/**
 * The slice of mysql2's callback API this adapter uses. It is declared here rather than imported,
 * so the package's types do not require mysql2 (an optional peer) to be installed.
 */

/** A column as mysql2 hands it to a `typeCast` function. */
export interface MysqlField {
  readonly type: string;
  readonly length: number;
  string(encoding?: string): string | null;
  buffer(): Buffer | null;
}

export type MysqlTypeCast = (field: MysqlField, next: () => unknown) => unknown;

export interface MysqlQueryOptions {
  readonly sql: string;
  readonly typeCast?: MysqlTypeCast;
}

/** What mysql2 returns for a statement that is not a SELECT. */
export interface MysqlResultHeader {
  readonly affectedRows: number;
  readonly insertId: number;
  readonly changedRows?: number;
}

export type MysqlCallback = (error: (Error & { code?: string; errno?: number; fatal?: boolean }) | null, result?: unknown) => void;

export interface MysqlConnection {
  readonly threadId: number | null;
  query(options: MysqlQueryOptions, values: readonly unknown[], callback: MysqlCallback): void;
  release(): void;
  destroy(): void;
  on(event: 'error', listener: (error: Error) => void): unknown;
  removeListener(event: 'error', listener: (error: Error) => void): unknown;
}

export interface MysqlPool {
  getConnection(callback: (error: Error | null, connection: MysqlConnection) => void): void;
  end(callback: (error?: Error | null) => void): void;
  on(event: 'connection', listener: (connection: MysqlConnection) => void): unknown;
}

/** mysql2's module, as TypeORM loaded it. */
export interface MysqlModule {
  createPool(options: Record<string, unknown>): MysqlPool;
}
