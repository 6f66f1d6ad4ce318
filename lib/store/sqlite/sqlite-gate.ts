import { AsyncLocalStorage } from 'node:async_hooks';
import type { Database } from 'better-sqlite3';
import type { DataSource, QueryRunner } from 'typeorm';
import { StoreBusyError } from '../../core/index.js';
import { waitOutBusy } from './sqlite-busy.js';
import { AttemptOwner, type GateOwner } from './sqlite-gate-owner.js';

const ENDED = 'This attempt transaction has ended; its EntityManager can no longer be used.';

/** Host code outside any scoped owner. Two such callers share it, as TypeORM itself would. */
const HOST: GateOwner = Object.freeze({ kind: 'host' });

interface Waiter {
  readonly owner: GateOwner;
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
 * Ownership follows the async context (AsyncLocalStorage): code running inside an owner's
 * transaction (a handler using its attempt's EntityManager, or a nested `manager.transaction`)
 * keeps the connection instead of waiting on itself.
 */
export class SqliteGate {
  private holder: GateOwner | null = null;
  private runner: QueryRunner | undefined;
  private original: { start: QueryRunner['startTransaction']; query: (...args: unknown[]) => Promise<unknown> } | undefined;
  private readonly waiters: Waiter[] = [];
  private readonly context = new AsyncLocalStorage<GateOwner>();
  private db: Database | undefined;
  /**
   * Jobs the holder's open transaction inserted. No other connection would see them before it
   * commits, so a status read the holder makes leaves them out, as PostgreSQL's would.
   */
  private readonly inserted = new Set<string>();

  constructor(private readonly timeoutMs: number) {}

  /** The owner the calling code acts as: its scoped owner, or the shared one for plain host code. */
  currentOwner(): GateOwner {
    return this.context.getStore() ?? HOST;
  }

  /**
   * The owner the calling code holds the connection as, or null. Plain host code (no scoped
   * owner) never counts as holding it here: the gate cannot tell two such callers apart.
   */
  callerHolds(): GateOwner | null {
    const current = this.context.getStore();
    return current !== undefined && current === this.holder ? current : null;
  }

  /** True when the caller holds the connection, as a scoped owner or as plain host code. */
  heldByCurrent(): boolean {
    return this.holder !== null && this.holder === this.currentOwner();
  }

  /** Waits for the connection, first come first served, or fails after the gate's timeout. */
  acquire(owner: GateOwner): Promise<void> {
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
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(new StoreBusyError(`The SQLite connection stayed inside another transaction for ${this.timeoutMs} ms.`));
      }, this.timeoutMs);
      timer.unref?.();
      this.waiters.push(waiter);
    });
  }

  /** Records jobs the caller's open transaction inserted (see {@link SqliteGate.insertedByHolder}). */
  noteInserted(ids: readonly string[]): void {
    if (this.heldByCurrent()) for (const id of ids) this.inserted.add(id);
  }

  /** The jobs the holder's open transaction inserted: uncommitted, so absent for everyone else. */
  insertedByHolder(): ReadonlySet<string> {
    return this.inserted;
  }

  /** Hands the connection to the next waiter, if any. */
  release(): void {
    // Committed or rolled back: what the transaction inserted now exists, or never will.
    this.inserted.clear();
    const next = this.waiters.shift();
    this.holder = next ? next.owner : null;
    next?.resolve();
  }

  /**
   * Runs `work` holding the connection from start to finish, even across awaits. Anything `work`
   * starts inherits the ownership. Inside a scheduler section already, it simply runs.
   */
  async exclusive<T>(work: () => Promise<T>): Promise<T> {
    if (this.callerHolds()?.kind === 'scheduler') return work();
    const owner: GateOwner = { kind: 'scheduler' };
    await this.acquire(owner);
    try {
      return await this.context.run(owner, work);
    } finally {
      this.release();
    }
  }

  /** Runs `work` as `owner` without taking the connection yet (an attempt takes it on first use). */
  runAs<T>(owner: GateOwner, work: () => Promise<T>): Promise<T> {
    return this.context.run(owner, work);
  }

  /** True while an attempt holds the connection with its transaction open. */
  holderIsOpenAttempt(): boolean {
    return this.holder instanceof AttemptOwner && this.holder.open && !this.holder.ended;
  }

  /** The BEGIN of the attempt holding the connection, while it waits for another process's lock. */
  attemptOpening(): Promise<void> | null {
    const holder = this.holder;
    return holder instanceof AttemptOwner && !holder.open && !holder.ended ? holder.opening : null;
  }

  /** Opens an attempt's transaction once, however many of its statements ask at the same time. */
  beginAttempt(owner: AttemptOwner): Promise<void> {
    if (owner.ended) return Promise.reject(new Error(ENDED));
    owner.opening ??= this.openAttempt(owner);
    return owner.opening;
  }

  /** Waits for the connection, then BEGIN IMMEDIATE, waiting out another process's write lock. */
  private async openAttempt(owner: AttemptOwner): Promise<void> {
    try {
      if (this.holder !== owner) await this.acquire(owner);
      if (owner.ended) throw new Error(ENDED);
      await this.original!.start();
      owner.open = true;
    } catch (error) {
      owner.ended = true;
      this.resetRunner();
      if (this.holder === owner) this.release();
      throw error;
    }
  }

  /** TypeORM marks a transaction active before its BEGIN runs; one that never began is not active. */
  private resetRunner(): void {
    const state = this.runner as unknown as { isTransactionActive: boolean; transactionDepth: number };
    state.isTransactionActive = false;
    state.transactionDepth = 0;
  }

  /**
   * BEGIN IMMEDIATE in place of TypeORM's deferred BEGIN, for host and attempt transactions alike.
   * A deferred transaction that reads first and writes later cannot wait for another process's
   * lock: SQLite fails its first write at once (SQLITE_BUSY, or SQLITE_BUSY_SNAPSHOT when the other
   * process committed since the read), and no retry inside the transaction can help. Taking the
   * lock at BEGIN, where waiting is safe, means nothing inside the transaction meets a locked file.
   */
  private async beginImmediate(owner: GateOwner): Promise<void> {
    const db = this.db!;
    await waitOutBusy(db, () => db.exec('BEGIN IMMEDIATE'), {
      timeoutMs: this.timeoutMs,
      stillWanted: () => {
        if (owner instanceof AttemptOwner && owner.ended) throw new Error('This attempt ended before its transaction could begin.');
      },
    });
  }

  /**
   * Ends an attempt's transaction with COMMIT or ROLLBACK (whatever savepoints the handler left
   * open go with it) and gives the connection back. A no-op if it never began.
   */
  async endAttempt(owner: AttemptOwner, statement: 'COMMIT' | 'ROLLBACK'): Promise<void> {
    if (owner.ended) return;
    owner.ended = true;
    // A BEGIN still waiting for another process stops at its next try; one that just got through rolls back here.
    if (owner.opening) await owner.opening.catch(() => undefined);
    if (!owner.open) return;
    try {
      await this.original!.query(statement);
    } finally {
      this.resetRunner();
      if (this.holder === owner) this.release();
    }
  }

  /**
   * Wraps the DataSource's shared QueryRunner so that host code waits while another owner holds
   * the connection, and a host transaction holds it from BEGIN to the outermost COMMIT or ROLLBACK.
   * `dataSource.transaction(...)` additionally runs each callback as its own owner, so two of them
   * started at once take turns instead of merging.
   */
  guard(dataSource: DataSource): void {
    const gate = this;
    const runner = dataSource.createQueryRunner();
    const start = runner.startTransaction.bind(runner);
    const commit = runner.commitTransaction.bind(runner);
    const rollback = runner.rollbackTransaction.bind(runner);
    const original = runner.query.bind(runner) as (...args: unknown[]) => Promise<unknown>;
    // TypeORM opens every top-level transaction with exactly this statement.
    const query = (...args: unknown[]) => {
      if (args[0] !== 'BEGIN TRANSACTION') return original(...args);
      dataSource.logger.logQuery('BEGIN IMMEDIATE', [], runner);
      return gate.beginImmediate(gate.currentOwner());
    };
    this.runner = runner;
    this.db = (dataSource.driver as unknown as { databaseConnection: Database }).databaseConnection;
    this.original = { start, query };
    // An attempt's first statement or transaction opens its transaction (later ones join that BEGIN).
    const lazyBegin = async () => {
      const owner = gate.context.getStore();
      if (owner instanceof AttemptOwner && !owner.open) await gate.beginAttempt(owner);
    };
    // The owner that took the gate for the current top-level transaction, to give it back at the end.
    let taken: GateOwner | null = null;
    const depth = () => (runner as unknown as { transactionDepth: number }).transactionDepth;

    const finish = () => {
      if (taken !== null && depth() === 0) {
        taken = null;
        gate.release();
      }
    };

    runner.startTransaction = async function (isolationLevel?: Parameters<QueryRunner['startTransaction']>[0]) {
      await lazyBegin();
      const owner = gate.currentOwner();
      if (gate.holder !== owner) {
        await gate.acquire(owner);
        taken = owner;
      }
      try {
        await start(isolationLevel);
      } catch (error) {
        if (depth() === 0) gate.resetRunner();
        finish();
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
      // The BEGIN is how an attempt's transaction opens; everything else opens it first.
      if (args[0] !== 'BEGIN TRANSACTION') await lazyBegin();
      if (gate.holder === null || gate.holder === gate.currentOwner()) return query(...args);
      const owner: GateOwner = { kind: 'host' };
      await gate.acquire(owner);
      try {
        return await query(...args);
      } finally {
        gate.release();
      }
    } as QueryRunner['query'];

    const manager = dataSource.manager;
    const transaction = manager.transaction.bind(manager) as (...args: unknown[]) => Promise<unknown>;
    manager.transaction = function (...args: unknown[]) {
      if (gate.callerHolds() !== null) return transaction(...args);
      return gate.context.run({ kind: 'host' }, () => transaction(...args));
    } as typeof manager.transaction;
  }
}

const gates = new WeakMap<DataSource, SqliteGate>();

/** The gate of a DataSource, created and installed on first use; every store on it shares one. */
export function sqliteGate(dataSource: DataSource, timeoutMs: number): SqliteGate {
  let gate = gates.get(dataSource);
  if (!gate) {
    gate = new SqliteGate(timeoutMs);
    gate.guard(dataSource);
    gates.set(dataSource, gate);
  }
  return gate;
}
