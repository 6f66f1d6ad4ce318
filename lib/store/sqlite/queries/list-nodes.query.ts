import type { Database } from 'better-sqlite3';
import type { FinishMode } from '../../../core/index.js';
import type { NodeRecord } from '../../job-store.types.js';
import type { SqliteNaming } from '../sqlite-naming.js';

interface SqliteNodeRow {
  id: string;
  host: string;
  pid: number;
  version: string;
  queues: string;
  concurrency: number;
  running: number;
  started_at: number;
  last_seen_at: number;
  stopped_at: number | null;
  finish: FinishMode | null;
}

/** The registry most recently seen first, read backwards from the (last_seen_at, id) index and stopped at the page size. */
export function listNodesQuery(db: Database, t: SqliteNaming) {
  const list = db.prepare(`
    SELECT id, host, pid, version, queues, concurrency, running, started_at, last_seen_at, stopped_at, finish FROM ${t.nodes}
    WHERE last_seen_at >= @since ORDER BY last_seen_at DESC, id DESC LIMIT @limit`);
  return (seenSince: Date | null, limit: number): NodeRecord[] =>
    (list.all({ since: seenSince?.getTime() ?? Number.MIN_SAFE_INTEGER, limit }) as SqliteNodeRow[]).map((row) => ({
      id: row.id,
      host: row.host,
      pid: row.pid,
      version: row.version,
      queues: JSON.parse(row.queues) as string[],
      concurrency: row.concurrency,
      running: row.running,
      startedAt: new Date(row.started_at),
      lastSeenAt: new Date(row.last_seen_at),
      stoppedAt: row.stopped_at === null ? null : new Date(row.stopped_at),
      finish: row.finish,
    }));
}
