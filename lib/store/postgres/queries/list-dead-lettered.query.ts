import type { JobRow } from '../../job-row.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { fromPgRow, jobColumns, type PgJobRow } from '../postgres-row.js';

/** Dead-lettered jobs, most recently dead-lettered first, read from the partial index. */
export function listDeadLetteredQuery(t: PostgresNaming) {
  const text = `
    SELECT ${jobColumns('j')} FROM ${t.jobs} j
    WHERE j.state = 'dead_lettered' ORDER BY j.finished_at DESC, j.seq DESC LIMIT $1`;
  return async (db: PgExecutor, limit: number): Promise<JobRow[]> => (await db.query<PgJobRow>(text, [limit])).map(fromPgRow);
}
