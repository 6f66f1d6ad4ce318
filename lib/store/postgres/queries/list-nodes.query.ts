import type { FinishMode } from '../../../core/index.js';
import type { NodeRecord } from '../../job-store.types.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

interface PgNodeRow {
  id: string;
  host: string;
  pid: number;
  version: string;
  queues: string[];
  concurrency: number;
  running: number;
  started_at: Date;
  last_seen_at: Date;
  stopped_at: Date | null;
  finish: FinishMode | null;
}

/**
 * The registry most recently seen first: the (last_seen_at, id) index read backwards from its end,
 * or from `seenSince` down, stopped at the page size.
 */
export function listNodesQuery(t: PostgresNaming) {
  const columns = `id, host, pid, version, queues, concurrency, running, started_at, last_seen_at, stopped_at, finish`;
  const all = `SELECT ${columns} FROM ${t.nodes} ORDER BY last_seen_at DESC, id DESC LIMIT $1`;
  const since = `SELECT ${columns} FROM ${t.nodes} WHERE last_seen_at >= $2 ORDER BY last_seen_at DESC, id DESC LIMIT $1`;
  return async (db: PgExecutor, seenSince: Date | null, limit: number): Promise<NodeRecord[]> => {
    const rows = seenSince === null ? await db.query<PgNodeRow>(all, [limit]) : await db.query<PgNodeRow>(since, [limit, seenSince]);
    return rows.map((row) => ({
      id: row.id,
      host: row.host,
      pid: row.pid,
      version: row.version,
      queues: row.queues,
      concurrency: row.concurrency,
      running: row.running,
      startedAt: row.started_at,
      lastSeenAt: row.last_seen_at,
      stoppedAt: row.stopped_at,
      finish: row.finish,
    }));
  };
}
