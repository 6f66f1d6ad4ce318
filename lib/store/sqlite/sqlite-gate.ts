import { AsyncLocalStorage } from 'node:async_hooks';
import type { DataSource, QueryRunner } from 'typeorm';
import { StoreBusyError } from '../../core/index.js';

/**
 * The one owner the gate cannot tell apart: host-application code running outside any scheduler
 * context. Two host flows share it, which keeps TypeORM's own behaviour for them unchanged.
 */
const HOST = Symbol('host');

interface Waiter {
  readonly owner: symbol;
  readonly resolve: () => void;
}

/**
 * Serializes transactions on one better-sqlite3 DataSource.
 *
 * TypeORM hands every caller of a better-sqlite3 DataSource the same QueryRunner and connection, so
 * two "transactions" opened at once are really one: the second becomes a savepoint inside the
 * first, and a rollback of either undoes both. The gate makes them take turns. Whoever opens a
 * transaction owns the connection until it commits or rolls back, and everyone else waits: the
 * scheduler's own operations, its attempt transactions, and the host application's transactions,
 * which the gate catches by wrapping the shared QueryRunner.
 *
 * Ownership follows the async context (AsyncLocalStorage), so code running inside an owner's
 * callback (a handler using its attempt's EntityManager, say) keeps the connection instead of
 * waiting on itself.
 */
export class SqliteGate {
  private holder: symbol | null = null;
  private readonly waiters: Waiter[] = [];
  private readonly context = new AsyncLocalStorage<symbol>();

  constructor(private readonly timeoutMs: number) {}

  /** The owner the calling code runs as. */
  currentOwner(): symbol {
    return this.context.getStore() ?? HOST;
  }

  /** True while some owner other than the caller holds the connection. */
  heldByOther(): boolean {
    return this.holder !== null && this.holder !== this.currentOwner();
  }

  /** True while the caller's own context holds the connection. */
  heldByCaller(): boolean {
    return this.holder !== null && this.holder === this.currentOwner();
  }

  /** Waits for the connection, first come first served, or fails after the gate's timeout. */
  acquire(owner: symbol): Promise<void> {
    if (this.holder === null) {
      this.holder = owner;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        owner,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        const index = this.waiters.indexOf(waiter);
        if (index >= 0) this.waiters.splice(index, 1);
        reject(
          new StoreBusyError(
            `The SQLite connection stayed inside another transaction for ${this.timeoutMs} ms; if you awaited the scheduler inside your own transaction, pass that transaction's manager instead.`,
          ),
        );
      }, this.timeoutMs);
      timer.unref?.();
      this.waiters.push(waiter);
    });
  }

  /** Hands the connection to the next waiter, if any. */
  release(): void {
    const next = this.waiters.shift();
    this.holder = next ? next.owner : null;
    next?.resolve();
  }

  /**
   * Runs `work` as a new owner that holds the connection from start to finish, even across awaits.
   * Anything `work` starts inherits the ownership.
   */
  async exclusive<T>(work: () => Promise<T>): Promise<T> {
    if (this.heldByCaller()) return work();
    const owner = Symbol('scheduler');
    await this.acquire(owner);
    try {
      return await this.context.run(owner, work);
    } finally {
      this.release();
    }
  }

  /**
   * Wraps the DataSource's shared QueryRunner so that host transactions and queries wait while
   * another owner holds the connection, and hold it themselves from BEGIN until the outermost
   * COMMIT or ROLLBACK.
   */
  guard(runner: QueryRunner): void {
    const gate = this;
    const start = runner.startTransaction.bind(runner);
    const commit = runner.commitTransaction.bind(runner);
    const rollback = runner.rollbackTransaction.bind(runner);
    const query = runner.query.bind(runner) as (...args: unknown[]) => Promise<unknown>;
    // Set when the runner itself took the gate for a top-level transaction, to give it back at the end.
    let takenBy: symbol | null = null;

    const finish = (failedToStart = false) => {
      const depth = (runner as unknown as { transactionDepth: number }).transactionDepth;
      if (takenBy !== null && (failedToStart ? depth === 0 : !runner.isTransactionActive)) {
        takenBy = null;
        gate.release();
      }
    };

    runner.startTransaction = async function (isolationLevel?: Parameters<QueryRunner['startTransaction']>[0]) {
      if (!gate.heldByCaller()) {
        const owner = gate.currentOwner();
        await gate.acquire(owner);
        takenBy = owner;
      }
      try {
        await start(isolationLevel);
      } catch (error) {
        finish(true);
        throw error;
      }
    };
    runner.commitTransaction = async function () {
      try {
        await commit();
      } finally {
        finish();
      }
    };
    runner.rollbackTransaction = async function () {
      try {
        await rollback();
      } finally {
        finish();
      }
    };
    runner.query = async function (...args: unknown[]) {
      if (!gate.heldByOther()) return query(...args);
      const owner = gate.currentOwner();
      await gate.acquire(owner);
      try {
        return await query(...args);
      } finally {
        gate.release();
      }
    } as QueryRunner['query'];
  }
}

const gates = new WeakMap<DataSource, SqliteGate>();

/** The gate of a DataSource, created and installed on first use; every store on it shares one. */
export function sqliteGate(dataSource: DataSource, timeoutMs: number): SqliteGate {
  let gate = gates.get(dataSource);
  if (!gate) {
    gate = new SqliteGate(timeoutMs);
    gate.guard(dataSource.createQueryRunner());
    gates.set(dataSource, gate);
  }
  return gate;
}
