/** Optional features a store declares. Callers branch on these; a store never fakes one. */
export interface StoreCapabilities {
  /** Jobs can be written inside the caller's own TypeORM transaction (`{ manager }`). */
  readonly transactionalEnqueue: boolean;
  /**
   * Where wake-up hints reach: every node on the database (`cluster`, LISTEN/NOTIFY on PostgreSQL),
   * only this process (`process`), or nowhere (`none`). Hints only cut latency; polling is the truth.
   */
  readonly wakeHints: 'cluster' | 'process' | 'none';
  /**
   * Several transactions can be open at once. False on SQLite, where the adapter runs one
   * transaction at a time per DataSource.
   */
  readonly concurrentTransactions: boolean;
  /** Each attempt can get an EntityManager whose writes commit with the fenced success write. */
  readonly attemptTransactions: boolean;
  /**
   * Every write is applied one at a time and stamped inside it (memory; SQLite, whose writers take
   * turns on the file), so the history's order and stamps are the order things happened in, to the
   * millisecond. `verify` judges limits on such a store with margins of milliseconds rather than
   * seconds (docs/verify.md). Absent means no.
   */
  readonly serialWrites?: boolean;
  /**
   * Whether a worker's claim may carry the outcomes waiting for their write
   * (`jobCompleteAndClaim`; the worker carries every one after a claim that came back short, and
   * otherwise only those that wait behind its outcome write in flight); absent means yes. False on PostgreSQL with `asyncClaimCommit`: a claim
   * carrying outcomes must wait for its flush, and measured 6 % slower than a claim that skips it
   * beside an outcome write of its own.
   */
  readonly claimsCarryOutcomes?: boolean;
  /**
   * The bounded pool of connections the store's operations share, when it has one (PostgreSQL).
   * A worker needs one connection per running attempt plus a few of its own, so the Nest module
   * warns at start when this pool is smaller. Absent on stores that open no pool.
   */
  readonly connectionPool?: ConnectionPoolCapability;
}

/** The size of a store's connection pool: the most connections it opens at once. */
export interface ConnectionPoolCapability {
  readonly size: number;
}
