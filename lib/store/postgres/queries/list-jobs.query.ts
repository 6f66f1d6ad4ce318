import type { ListJobsParams } from '../../job-store.js';
import type { JobRow } from '../../job-row.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { fromPgRow, jobColumns, type PgJobRow } from '../postgres-row.js';

/** Jobs newest first, each filter optional (a null parameter matches everything). */
export function listJobsQuery(t: PostgresNaming) {
  const text = `
    SELECT ${jobColumns('j')} FROM ${t.jobs} j
    WHERE ($1::text IS NULL OR j.state = $1) AND ($2::text IS NULL OR j.queue = $2) AND ($3::text IS NULL OR j.name = $3)
    ORDER BY j.seq DESC LIMIT $4`;
  return async (db: PgExecutor, params: ListJobsParams & { limit: number }): Promise<JobRow[]> => {
    const rows = await db.query<PgJobRow>(text, [params.state ?? null, params.queue ?? null, params.name ?? null, params.limit]);
    return rows.map(fromPgRow);
  };
}
