/** Optional features a store declares. Callers branch on these; a store never fakes one. */
export interface StoreCapabilities {
  /** Jobs can be written inside the caller's own TypeORM transaction (`{ manager }`). */
  readonly transactionalEnqueue: boolean;
  /** The store pushes wake-up hints when work becomes due (LISTEN/NOTIFY on PostgreSQL). */
  readonly wakeHints: boolean;
  /**
   * Several transactions can be open at once. False on SQLite, where the adapter runs one
   * transaction at a time per DataSource.
   */
  readonly concurrentTransactions: boolean;
}
