import type { Database } from 'better-sqlite3';
import type { ParentOutput } from '../../job-store.js';
import type { SqliteNaming } from '../sqlite-naming.js';

/** Walks the job's ancestors (parents, their parents, ...) and returns the output of the one asked for. */
export function parentOutputQuery(db: Database, t: SqliteNaming) {
  const ancestors = db.prepare(`
    WITH RECURSIVE ancestors(id) AS (
      SELECT parent_id FROM ${t.dependencies} WHERE child_id = ?
      UNION
      SELECT d.parent_id FROM ${t.dependencies} d JOIN ancestors a ON d.child_id = a.id
    )
    SELECT output FROM ${t.jobs} WHERE id = ? AND id IN (SELECT id FROM ancestors)`);
  return (jobId: string, ancestorId: string): ParentOutput => {
    const row = ancestors.get(jobId, ancestorId) as { output: string | null } | undefined;
    return row && row.output !== null ? { found: true, output: JSON.parse(row.output) as unknown } : { found: false, output: undefined };
  };
}
