/**
 * How far apart two stamps must be for verify to trust their order. On a store whose writes take
 * turns (memory, SQLite: one write transaction at a time, stamped inside it) the log is the order
 * things happened in, to the millisecond. On PostgreSQL and MySQL, stamps are taken as a statement
 * or transaction begins, a claim may wait for a lock after its stamp, and the log's order is not
 * the order claims counted in (PostgreSQL's is by transaction id): so a shorter overlap of two jobs
 * cannot be told from jobs that ran one after the other.
 */
export interface StampMargins {
  /** A claim is judged against every limit in force this long either side of its stamp. */
  readonly changeMs: number;
  /** A job counts against a claim (or a key's taker) only if it started this long before it, and ended (and held its lease) this long after. */
  readonly overlapMs: number;
  /** The most a rate's window is narrowed by (half the window at most): a start's stamp and its entry's may differ by it. */
  readonly rateMs: number;
}

/** Stores with concurrent writers: PostgreSQL and MySQL. */
export const CONCURRENT_MARGINS: StampMargins = { changeMs: 60_000, overlapMs: 2_000, rateMs: 1_000 };

/** Stores whose writes take turns, stamped inside each: memory and SQLite (whose processes share one clock, to the millisecond or so). */
export const SERIAL_MARGINS: StampMargins = { changeMs: 10, overlapMs: 10, rateMs: 10 };

/**
 * Claims that looked over a cap, or takings of a held key, waiting at once for the jobs they
 * counted to end; one more is not judged, and counted. A job whose lease lapsed with no entry to
 * end it (its queue paused, say) keeps every claim of its key waiting until the end of the log.
 */
export const MAX_WAITING = 10_000;
