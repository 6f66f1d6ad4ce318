import { ANY_QUEUE, WakeHub } from '../wake-hints.js';
import type { SqliteConnection } from './sqlite-connection.js';

/** The SQLite driver's wake hints: in-process only, since another process cannot hear them. */
export class SqliteHints extends WakeHub {
  constructor(private readonly conn: SqliteConnection) {
    super();
  }

  /**
   * Called inside a write, before jobs may finish: if one of them has a dependant waiting, the
   * triggers may release it, and an in-process hint is how a claimer hears of it promptly. The hint
   * is harmless when the write changes nothing: a claim it wakes finds no work, or waits for the gate.
   */
  ifReleasing(jobIds: readonly string[]): void {
    if (this.conn.statements().hasOpenEdges(jobIds)) this.emit(ANY_QUEUE);
  }
}
