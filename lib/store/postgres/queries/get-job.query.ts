import type { JobRow } from '../../job-row.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { fromPgRow, jobColumns, type PgJobRow } from '../postgres-row.js';

export function getJobQuery(t: PostgresNaming) {
  const text = `SELECT ${jobColumns('j')} FROM ${t.jobs} j WHERE j.id = $1`;
  return async (db: PgExecutor, jobId: string): Promise<JobRow | null> => {
    const [row] = await db.query<PgJobRow>(text, [jobId]);
    return row ? fromPgRow(row) : null;
  };
}
