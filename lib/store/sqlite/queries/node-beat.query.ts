import type { Database } from 'better-sqlite3';
import type { FinishMode } from '../../../core/index.js';
import type { DriverNodeBeatParams } from '../../checked/store-driver.js';
import type { SqliteNaming } from '../sqlite-naming.js';

/**
 * Upserts a node's registry row at `now` (the database's clock), inside the caller's write
 * transaction. The first beat of an id, or the first after its stop, starts a run (`started_at`);
 * others keep it. The row records the finish mode of the store the beat goes through.
 */
export function nodeBeatQuery(db: Database, t: SqliteNaming) {
  const beat = db.prepare(`
    INSERT INTO ${t.nodes} (id, host, pid, version, queues, concurrency, running, started_at, last_seen_at, stopped_at, finish)
    VALUES (@id, @host, @pid, @version, @queues, @concurrency, @running, @now, @now, NULL, @finish)
    ON CONFLICT (id) DO UPDATE SET host = excluded.host, pid = excluded.pid, version = excluded.version, queues = excluded.queues,
      concurrency = excluded.concurrency, running = excluded.running, last_seen_at = excluded.last_seen_at, finish = excluded.finish,
      started_at = CASE WHEN stopped_at IS NULL THEN started_at ELSE excluded.started_at END, stopped_at = NULL`);
  return (node: DriverNodeBeatParams, finish: FinishMode, now: number): void => {
    const { id, host, pid, version, queues, concurrency, running } = node;
    beat.run({ id, host, pid, version, queues: JSON.stringify(queues), concurrency, running, finish, now });
  };
}
