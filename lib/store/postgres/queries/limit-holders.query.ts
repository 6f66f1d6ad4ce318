import type { DriverHolders } from '../../operator-reads.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

type Row = { max: number | null; id: string | null; name: string; queue: string; worker_id: string; attempt: number; leased_until: Date };

/**
 * A limit's cap and the jobs holding its slots now, soonest lease end first, at most $2. The
 * slots are read through the (key, held_until) index from now on, so only held slots are read,
 * and a limit has at most its max plus its surplus of them, whatever the table holds. A slot
 * carries its holder's lease (postgres-limits.ts); the job row is checked too, so a slot whose
 * release is in flight never shows a job that stopped.
 */
export function limitHoldersQuery(t: PostgresNaming) {
  const text = `
    SELECT l.max, h.id, h.name, h.queue, h.worker_id, h.attempt, h.leased_until
    FROM (SELECT) one
    LEFT JOIN ${t.limits} l ON l.key = $1
    LEFT JOIN LATERAL (
      SELECT j.id, j.name, j.queue, j.worker_id, j.attempt, j.leased_until
      FROM ${t.slots} s JOIN ${t.jobs} j ON j.id = s.job_id AND j.state = 'running' AND j.leased_until > now()
      WHERE l.key IS NOT NULL AND s.key = $1 AND s.held_until > now()
      ORDER BY j.leased_until, j.id LIMIT $2
    ) h ON true`;
  return async (db: PgExecutor, key: string, limit: number): Promise<DriverHolders> => {
    const rows = await db.query<Row>(text, [key, limit + 1]);
    return {
      max: rows[0]!.max,
      holders: rows
        .filter((row) => row.id !== null)
        .map((row) => ({ jobId: row.id!, name: row.name, queue: row.queue, workerId: row.worker_id, attempt: row.attempt, leasedUntil: row.leased_until })),
    };
  };
}
