import type { Database } from 'better-sqlite3';
import type { SqliteNaming } from '../sqlite-naming.js';

/** Deletes up to `limit` registry rows not seen for `olderThanMs`, oldest first through the (last_seen_at, id) index. */
export function pruneNodesQuery(db: Database, t: SqliteNaming) {
  const prune = db.prepare(`
    DELETE FROM ${t.nodes} WHERE id IN (
      SELECT id FROM ${t.nodes} WHERE last_seen_at < @cutoff ORDER BY last_seen_at, id LIMIT @limit
    )`);
  return (olderThanMs: number, limit: number, now: number): number => prune.run({ cutoff: now - olderThanMs, limit }).changes;
}
