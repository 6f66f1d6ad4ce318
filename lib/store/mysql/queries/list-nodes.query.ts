import type { FinishMode } from '../../../core/index.js';
import type { NodeRecord } from '../../job-store.types.js';
import type { MysqlExecutor } from '../mysql-executor.js';
import { fromMysqlInstant, toMysqlInstant } from '../mysql-instant.js';
import type { MysqlNaming } from '../mysql-naming.js';

interface MysqlNodeRow {
  id: string;
  host: string;
  pid: number;
  version: string;
  queues: string;
  concurrency: number;
  running: number;
  started_at: string;
  last_seen_at: string;
  stopped_at: string | null;
  finish: FinishMode | null;
}

/**
 * The registry most recently seen first: the (last_seen_at, id) index read backwards from its end,
 * or from `seenSince` down, stopped at the page size.
 */
export function listNodesQuery(t: MysqlNaming) {
  const columns = `id, host, pid, version, queues, concurrency, running, started_at, last_seen_at, stopped_at, finish`;
  const all = `SELECT ${columns} FROM ${t.nodes} ORDER BY last_seen_at DESC, id DESC LIMIT ?`;
  const since = `SELECT ${columns} FROM ${t.nodes} WHERE last_seen_at >= ? ORDER BY last_seen_at DESC, id DESC LIMIT ?`;
  return async (db: MysqlExecutor, seenSince: Date | null, limit: number): Promise<NodeRecord[]> => {
    const rows =
      seenSince === null ? await db.query<MysqlNodeRow>(all, [limit]) : await db.query<MysqlNodeRow>(since, [toMysqlInstant(seenSince.getTime()), limit]);
    return rows.map((row) => ({
      id: row.id,
      host: row.host,
      pid: row.pid,
      version: row.version,
      queues: JSON.parse(row.queues) as string[],
      concurrency: row.concurrency,
      running: row.running,
      startedAt: fromMysqlInstant(row.started_at),
      lastSeenAt: fromMysqlInstant(row.last_seen_at),
      stoppedAt: fromMysqlInstant(row.stopped_at),
      finish: row.finish,
    }));
  };
}
