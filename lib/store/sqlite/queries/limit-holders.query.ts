import type { Database } from 'better-sqlite3';
import type { DriverHolders } from '../../operator-reads.js';
import type { SqliteNaming } from '../sqlite-naming.js';

type Row = { id: string; name: string; queue: string; worker_id: string; attempt: number; leased_until: number };

/**
 * A limit's cap and the jobs holding its slots at `now`: on this store, the running jobs of its
 * queue or key with a live lease (the claim counts exactly these, claim-limited.query.ts), read
 * through the running-jobs index of that column (migration 0003), so the read costs the jobs that
 * run there, never the jobs stored. Soonest lease end first, at most `limit + 1`.
 */
export function limitHoldersQuery(db: Database, t: SqliteNaming) {
  const max = db.prepare(`SELECT max FROM ${t.limits} WHERE key = ?`).pluck();
  const columns = `id, name, queue, worker_id, attempt, leased_until`;
  const order = `AND leased_until > @now ORDER BY leased_until, id LIMIT @limit`;
  const byQueue = db.prepare(`SELECT ${columns} FROM ${t.jobs} WHERE state = 'running' AND queue = @value ${order}`);
  const byKey = db.prepare(`SELECT ${columns} FROM ${t.jobs} WHERE state = 'running' AND concurrency_key = @value ${order}`);
  return (key: string, limit: number, now: number): DriverHolders => {
    const cap = max.get(key) as number | undefined;
    if (cap === undefined) return { max: null, holders: [] };
    const [statement, value] = key.startsWith('queue:') ? [byQueue, key.slice('queue:'.length)] : [byKey, key.slice('key:'.length)];
    const rows = statement.all({ value, now, limit: limit + 1 }) as Row[];
    return {
      max: cap,
      holders: rows.map((row) => ({
        jobId: row.id,
        name: row.name,
        queue: row.queue,
        workerId: row.worker_id,
        attempt: row.attempt,
        leasedUntil: new Date(row.leased_until),
      })),
    };
  };
}
