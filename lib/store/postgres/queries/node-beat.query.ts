import type { FinishMode } from '../../../core/index.js';
import type { DriverNodeBeatParams } from '../../checked/store-driver.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

/**
 * Upserts a node's registry row by the database's clock. A statement of its own, not a step of
 * the heartbeat's: a node beats when it holds no lease (no heartbeat is sent then), and a beat that
 * fails (a lock, a schema not migrated yet) must never fail the renewal of a lease. The first beat
 * of an id, or the first after its stop, starts a run (`started_at`); others keep it. The row
 * records the finish mode of the store the beat goes through.
 */
export function nodeBeatQuery(t: PostgresNaming) {
  const text = `INSERT INTO ${t.nodes} AS n (id, host, pid, version, queues, concurrency, running, started_at, last_seen_at, stopped_at, finish)
    VALUES ($1, $2, $3, $4, $5::text[], $6, $7, now(), now(), NULL, $8)
    ON CONFLICT (id) DO UPDATE SET host = excluded.host, pid = excluded.pid, version = excluded.version, queues = excluded.queues,
      concurrency = excluded.concurrency, running = excluded.running, last_seen_at = excluded.last_seen_at, finish = excluded.finish,
      started_at = CASE WHEN n.stopped_at IS NULL THEN n.started_at ELSE excluded.started_at END, stopped_at = NULL`;
  return async (db: PgExecutor, node: DriverNodeBeatParams, finish: FinishMode): Promise<void> => {
    await db.query(text, [node.id, node.host, node.pid, node.version, node.queues, node.concurrency, node.running, finish]);
  };
}
