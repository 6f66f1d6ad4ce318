import type { Database } from 'better-sqlite3';
import type { SqliteNaming } from '../sqlite-naming.js';

/** Marks a registered node stopped at `now`; a second stop finds no row to change. */
export function nodeStopQuery(db: Database, t: SqliteNaming) {
  const stop = db.prepare(`UPDATE ${t.nodes} SET stopped_at = @now, last_seen_at = @now, running = 0 WHERE id = @id AND stopped_at IS NULL`);
  return (id: string, now: number): void => {
    stop.run({ id, now });
  };
}
