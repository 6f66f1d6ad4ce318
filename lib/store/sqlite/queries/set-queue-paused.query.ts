import type { Database } from 'better-sqlite3';
import type { SqliteNaming } from '../sqlite-naming.js';

export function setQueuePausedQuery(db: Database, t: SqliteNaming) {
  const upsert = db.prepare(`
    INSERT INTO ${t.queues} (name, paused, updated_at) VALUES (@name, @paused, @now)
    ON CONFLICT (name) DO UPDATE SET paused = excluded.paused, updated_at = excluded.updated_at`);
  return (queue: string, paused: boolean, now: number): void => {
    upsert.run({ name: queue, paused: paused ? 1 : 0, now });
  };
}
