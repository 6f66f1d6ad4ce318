import type { DataSource, EntityManager, QueryRunner } from 'typeorm';

/**
 * A QueryRunner of the DataSource's own that TypeORM sees as already inside a transaction (so
 * every save opens a savepoint, never its own BEGIN/COMMIT), and that opens the transaction only
 * with its first statement: an attempt whose handler never uses the manager costs no round trip
 * and no connection. The SQL stores' attempt transactions are built on it; each says how its
 * transaction begins.
 */
export class DeferredTransaction {
  readonly manager: EntityManager;
  readonly runner: QueryRunner;
  private readonly send: QueryRunner['query'];
  private begun = false;
  private ended = false;

  /**
   * @param begin the statements that open the transaction, in order.
   * @param listener hears the statements this class sends, and the handler's too when `hearHandler`.
   */
  constructor(
    dataSource: DataSource,
    private readonly begin: readonly string[],
    private readonly listener?: (text: string) => void,
    hearHandler = false,
  ) {
    const runner = dataSource.createQueryRunner();
    this.runner = runner;
    this.send = runner.query.bind(runner);
    setTransactionState(runner, true);
    runner.query = (async (...args: Parameters<QueryRunner['query']>) => {
      if (this.ended) throw new Error('This attempt transaction has ended; its EntityManager can no longer be used.');
      await this.open();
      if (hearHandler) this.listener?.(args[0]);
      return this.send(...args);
    }) as QueryRunner['query'];
    this.manager = runner.manager;
  }

  /** True once the transaction is open and until it ends. */
  get opened(): boolean {
    return this.begun && !this.ended;
  }

  /** Opens the transaction if no statement has yet. */
  async open(): Promise<void> {
    if (this.begun) return;
    this.begun = true;
    for (const statement of this.begin) await this.control(statement);
  }

  /** Commits or rolls back (if it was ever opened) and releases the runner; later calls do nothing. */
  async end(statement: 'COMMIT' | 'ROLLBACK'): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    try {
      if (this.begun) await this.control(statement);
    } finally {
      setTransactionState(this.runner, false);
      await this.runner.release();
    }
  }

  private control(statement: string): Promise<unknown> {
    this.listener?.(statement);
    return this.send(statement);
  }
}

/** TypeORM keeps these two fields to decide between BEGIN and SAVEPOINT; set them as if a transaction were open. */
function setTransactionState(runner: QueryRunner, active: boolean): void {
  const state = runner as unknown as { isTransactionActive: boolean; transactionDepth: number };
  state.isTransactionActive = active;
  state.transactionDepth = active ? 1 : 0;
}
