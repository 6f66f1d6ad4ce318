import type { DependencyMode, JobState } from '../../../core/index.js';
import type { DriverEdges, EdgeRow } from '../../operator-reads.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

type Row = { side: 'job' | 'parent' | 'dependant'; id: string; name: string; queue: string; state: JobState; settled: boolean | null; mode: DependencyMode | null; sequence: 'block' | 'continue' | null; traceparent: string | null; tracestate: string | null };

/**
 * A job and up to $2 of its edges each way, in one statement: its parents through the edge
 * table's key (child_id, parent_id), in parent order, and its dependants through the parent index
 * (migration 0011) in whatever order it holds them, each joined to the other job by its key. The
 * limit stops both reads, so a job with a million dependants costs $2 edges.
 */
export function jobEdgesQuery(t: PostgresNaming) {
  const text = `
    SELECT 'job' AS side, j.id, j.name, j.queue, j.state, NULL::boolean AS settled, j.dependency_mode AS mode, NULL::text AS sequence, NULL::text AS traceparent, NULL::text AS tracestate
    FROM ${t.jobs} j WHERE j.id = $1
    UNION ALL
    (SELECT 'parent', p.id, p.name, p.queue, p.state, d.settled, NULL, d.sequence, p.traceparent, p.tracestate
     FROM ${t.dependencies} d JOIN ${t.jobs} p ON p.id = d.parent_id
     WHERE d.child_id = $1 ORDER BY d.parent_id LIMIT $2)
    UNION ALL
    (SELECT 'dependant', c.id, c.name, c.queue, c.state, d.settled, c.dependency_mode, d.sequence, c.traceparent, c.tracestate
     FROM ${t.dependencies} d JOIN ${t.jobs} c ON c.id = d.child_id
     WHERE d.parent_id = $1 LIMIT $2)`;
  return async (db: PgExecutor, id: string, limit: number): Promise<DriverEdges | null> => {
    const rows = await db.query<Row>(text, [id, limit + 1]);
    const job = rows.find((row) => row.side === 'job');
    if (!job) return null;
    const edge = (row: Row, parentState: JobState, mode: DependencyMode | null): EdgeRow => ({
      id: row.id,
      name: row.name,
      queue: row.queue,
      state: row.state,
      settled: row.settled === true,
      parentState,
      mode,
      sequence: row.sequence,
      traceparent: row.traceparent,
      tracestate: row.tracestate,
    });
    return {
      parents: rows.filter((row) => row.side === 'parent').map((row) => edge(row, row.state, job.mode)),
      dependants: rows.filter((row) => row.side === 'dependant').map((row) => edge(row, job.state, row.mode)),
    };
  };
}
