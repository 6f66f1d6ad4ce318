import type { MysqlResultHeader } from './mysql-driver-types.js';
import type { MysqlExecutor, MysqlStatement } from './mysql-executor.js';

/**
 * A transaction of the store's own on one session, which saves round trips: START TRANSACTION goes
 * with the first statement, and `commitWith` sends a write's last statements with the COMMIT, all
 * in one query each (the store's sessions allow several statements per query). If a statement of
 * such a query fails, the server runs none after it, so a failed COMMIT script commits nothing.
 */
export class MysqlTransaction implements MysqlExecutor {
  private started = false;
  private ended = false;

  constructor(private readonly db: MysqlExecutor) {}

  get committed(): boolean {
    return this.ended;
  }

  get begun(): boolean {
    return this.started;
  }

  async query<R>(sql: string, values: readonly unknown[] = []): Promise<R[]> {
    return (await this.send({ sql, values })) as R[];
  }

  async run(sql: string, values: readonly unknown[] = []): Promise<MysqlResultHeader> {
    return (await this.send({ sql, values })) as MysqlResultHeader;
  }

  async script(statements: readonly MysqlStatement[]): Promise<unknown[]> {
    if (statements.length === 0) return [];
    if (this.started) return this.db.script(statements);
    this.started = true;
    return (await this.db.script([{ sql: 'START TRANSACTION' }, ...statements])).slice(1);
  }

  /** Sends `statements` and COMMIT in one query; the results are the statements'. */
  async commitWith(statements: readonly MysqlStatement[] = []): Promise<unknown[]> {
    const results = this.started ? await this.db.script([...statements, { sql: 'COMMIT' }]) : await this.script([...statements, { sql: 'COMMIT' }]);
    this.ended = true;
    return results.slice(0, statements.length);
  }

  private async send(statement: MysqlStatement): Promise<unknown> {
    const [result] = await this.script([statement]);
    return result;
  }
}
