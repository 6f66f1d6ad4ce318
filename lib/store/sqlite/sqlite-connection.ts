import type { Database } from 'better-sqlite3';
import type { DataSource, EntityManager } from 'typeorm';
import { InvalidArgumentError, type Clock } from '../../core/index.js';
import { waitOutBusy } from './sqlite-busy.js';
import { sqliteGate, type SqliteGate } from './sqlite-gate.js';
import type { SqliteNaming } from './sqlite-naming.js';
import { sqliteBootStatements, sqliteStatements, type SqliteBootStatements, type SqliteStatements } from './sqlite-statements.js';

/**
 * The SQLite driver's transaction plumbing: the DataSource's one connection, the gate every
 * transaction on it takes turns through, the prepared statements, and the ways the driver reads
 * and writes through them (a gated IMMEDIATE transaction, or a savepoint inside the caller's).
 */
export class SqliteConnection {
  readonly db: Database;
  /** Serializes every transaction on the DataSource; attempt transactions run through it too. */
  readonly gate: SqliteGate;
  /** The clock and the reads that need no prepared statements of the store's. */
  readonly boot: SqliteBootStatements;
  private sql?: SqliteStatements;

  constructor(
    readonly dataSource: DataSource,
    readonly naming: SqliteNaming,
    readonly busyTimeoutMs: number,
    private readonly clock?: Clock,
  ) {
    this.db = (dataSource.driver as unknown as { databaseConnection: Database }).databaseConnection;
    this.gate = sqliteGate(dataSource, busyTimeoutMs);
    this.boot = sqliteBootStatements(this.db, naming);
  }

  /** The store's prepared statements, prepared on first use (the tables must exist by then). */
  statements(): SqliteStatements {
    if (!this.sql) this.sql = sqliteStatements(this.db, this.naming);
    return this.sql;
  }

  /** Prepares the statements afresh, after a migration changed the tables they read. */
  prepare(): void {
    this.sql = sqliteStatements(this.db, this.naming);
  }

  /** The database's clock, in epoch milliseconds (the injected clock's, when the store was given one). */
  now(): number {
    return this.clock === undefined ? this.boot.now() : this.clock.now();
  }

  /** Runs `work` as a savepoint of the transaction already open on the connection (or a plain transaction). */
  inOpenTransaction<T>(work: () => T): T {
    return this.db.transaction(work)();
  }

  /**
   * Runs a write as one IMMEDIATE transaction, synchronously, once the connection is free. Inside
   * a scheduler section that already owns the connection (an attempt transaction) it joins that
   * transaction as a savepoint, because on one shared connection there is no other place for it.
   */
  async write<T>(work: (now: number) => T): Promise<T> {
    const holder = this.gate.callerHolds();
    if (holder?.kind === 'scheduler') return this.db.transaction(() => work(this.now()))();
    if (holder?.kind === 'host') throw this.insideHostTransaction();
    return this.gate.exclusive(() => this.retryBusy(() => this.db.transaction(() => work(this.now())).immediate()));
  }

  /**
   * Reads wait for the connection too, or they could see another owner's uncommitted rows. In WAL
   * mode another process's write lock does not block them; the rare busy read (such as while a
   * crashed process's log is recovered) is waited out like a write.
   */
  async read<T>(work: () => T): Promise<T> {
    if (this.gate.callerHolds() !== null) return work();
    return this.gate.exclusive(() => waitOutBusy(this.db, work, { timeoutMs: this.busyTimeoutMs }));
  }

  /**
   * A status read, as {@link SqliteConnection.read}, except for code that holds the connection in
   * an open transaction of its own (plain host code included): it reads in place, since it cannot
   * wait for itself, and leaves out the jobs that transaction inserted, which exist for no one
   * else until it commits.
   */
  async readStatuses<T extends { readonly id: string }>(work: () => T[]): Promise<T[]> {
    if (!this.gate.heldByCurrent()) return this.read(work);
    const inserted = this.gate.insertedByHolder();
    return work().filter((row) => !inserted.has(row.id));
  }

  /**
   * A write from code that holds the connection in its own transaction would either join that
   * transaction silently or wait for it forever; refuse it instead.
   */
  insideHostTransaction(): InvalidArgumentError {
    return new InvalidArgumentError(
      'This SQLite DataSource is inside a transaction opened by the calling code; pass that transaction\'s manager to enqueue, or call the scheduler after the transaction ends.',
      'manager',
    );
  }

  /**
   * Runs `work`, which begins with BEGIN IMMEDIATE, once no other process holds the file's write
   * lock: it backs off without blocking the event loop and tries again, up to `busyTimeoutMs`.
   */
  async retryBusy<T>(work: () => T): Promise<T> {
    return waitOutBusy(
      this.db,
      () => {
        if (this.db.inTransaction) throw Object.assign(new Error('connection inside a transaction opened outside TypeORM'), { code: 'SQLITE_BUSY' });
        return work();
      },
      { timeoutMs: this.busyTimeoutMs },
    );
  }

  /** Refuses a manager the enqueue cannot join: another DataSource's, or one outside an open transaction. */
  checkManager(manager: EntityManager): void {
    if (manager?.connection !== this.dataSource) {
      throw new InvalidArgumentError('The manager passed to enqueue belongs to another DataSource; use one from the DataSource the scheduler was given.', 'manager');
    }
    if (!manager.queryRunner?.isTransactionActive || !this.gate.heldByCurrent()) {
      throw new InvalidArgumentError(
        'The manager passed to enqueue is not inside an open transaction; use the manager that dataSource.transaction() hands you.',
        'manager',
      );
    }
  }
}
