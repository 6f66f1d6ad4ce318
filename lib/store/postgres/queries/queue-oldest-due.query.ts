import type { DriverOldestDue } from '../../operator-reads.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { parkedByRunTime } from './claim-lanes.sql.js';
import { scheduledPriorities } from './claim-steps.sql.js';

type Row = { queue: string | null; examined: string; at: string | null; now: string | null };

/**
 * The oldest due job per queue among the first $1 due jobs in run-time order, read from the start
 * of each priority's range of the claim index (priority, run_at, seq) and of the parked jobs (held
 * back by a limit, claim-lanes.sql.ts) by run time, and merged, so at most $1 per priority in use
 * and $1 more, after ORDERED_READ_SETTINGS in the caller's transaction. The
 * claim index does not carry the queue, so one probe per queue could not stop early: a queue with
 * nothing due would walk every due job of the others. One bounded read answers every queue at once
 * instead, counts each queue's due jobs among those read, and says how far it got. $2 holds the asked queues, or null for every queue found.
 */
export function queueOldestDueQuery(t: PostgresNaming) {
  const text = `
    WITH due AS MATERIALIZED (
      SELECT d.queue, d.run_at FROM (
        SELECT d.* FROM ${scheduledPriorities(t)} p CROSS JOIN LATERAL (
          SELECT j.queue, j.run_at, j.seq FROM ${t.jobs} j
          WHERE j.state = 'scheduled' AND j.parked_key IS NULL AND j.priority = p.v AND j.run_at <= now() ORDER BY j.run_at, j.seq LIMIT $1
        ) d
        UNION ALL
        (SELECT j.queue, j.run_at, j.seq FROM ${t.jobs} j
          WHERE ${parkedByRunTime('j')} AND j.run_at <= now() ORDER BY j.run_at, j.seq LIMIT $1)
      ) d ORDER BY d.run_at, d.seq LIMIT $1
    )
    SELECT NULL::text AS queue, count(*) AS examined, floor(extract(epoch FROM max(run_at)) * 1000) AS at,
      floor(extract(epoch FROM now()) * 1000) AS now
    FROM due
    UNION ALL
    SELECT queue, count(*), floor(extract(epoch FROM min(run_at)) * 1000), NULL
    FROM due WHERE $2::text[] IS NULL OR queue = ANY($2::text[]) GROUP BY queue`;
  return async (db: PgExecutor, queues: readonly string[] | null, scan: number): Promise<DriverOldestDue> => {
    const rows = await db.query<Row>(text, [scan, queues]);
    const summary = rows.find((row) => row.queue === null)!;
    const found = rows.filter((row) => row.queue !== null);
    const oldest = new Map(found.map((row) => [row.queue!, Number(row.at)]));
    const due = new Map(found.map((row) => [row.queue!, Number(row.examined)]));
    return { oldest, due, examined: Number(summary.examined), last: summary.at === null ? null : Number(summary.at), now: Number(summary.now) };
  };
}
