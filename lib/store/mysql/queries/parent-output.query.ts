import type { ParentOutput } from '../../job-store.types.js';
import type { MysqlExecutor } from '../mysql-executor.js';
import type { MysqlNaming } from '../mysql-naming.js';

/**
 * Walks the job's ancestors (parents, their parents, ...) through the edge table's key and returns
 * the output of the one asked for. UNION (not UNION ALL) stops the walk at ancestors already seen.
 */
export async function parentOutput(db: MysqlExecutor, t: MysqlNaming, jobId: string, ancestorId: string): Promise<ParentOutput> {
  const [row] = await db.query<{ output: string | null }>(
    `WITH RECURSIVE ancestors (id) AS (
       SELECT parent_id FROM ${t.dependencies} WHERE child_id = ?
       UNION
       SELECT d.parent_id FROM ${t.dependencies} d JOIN ancestors a ON d.child_id = a.id
     )
     SELECT j.output FROM ${t.jobs} j WHERE j.id = ? AND j.id IN (SELECT id FROM ancestors)`,
    [jobId, ancestorId],
  );
  return row && row.output !== null ? { found: true, output: JSON.parse(row.output) as unknown } : { found: false, output: undefined };
}
