import type { ParentOutput } from '../../job-store.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

/** Walks the job's ancestors (parents, their parents, ...) and returns the output of the one asked for. */
export function parentOutputQuery(t: PostgresNaming) {
  const text = `WITH RECURSIVE ancestors(id) AS (
           SELECT parent_id FROM ${t.dependencies} WHERE child_id = $1
           UNION
           SELECT d.parent_id FROM ${t.dependencies} d JOIN ancestors a ON d.child_id = a.id
         )
         SELECT j.output::text AS output FROM ${t.jobs} j WHERE j.id = $2 AND j.id IN (SELECT id FROM ancestors)`;
  return async (db: PgExecutor, jobId: string, ancestorId: string): Promise<ParentOutput> => {
    const [row] = await db.query<{ output: string | null }>(text, [jobId, ancestorId]);
    return row && row.output !== null ? { found: true, output: JSON.parse(row.output) as unknown } : { found: false, output: undefined };
  };
}
