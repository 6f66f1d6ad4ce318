import type { DependencyMode, JobState } from '../../../core/index.js';
import type { DriverEdges, EdgeRow } from '../../operator-reads.js';
import type { MysqlExecutor } from '../mysql-executor.js';
import type { MysqlNaming } from '../mysql-naming.js';

type Row = {
  side: 'job' | 'parent' | 'dependant';
  id: string;
  name: string;
  queue: string;
  state: JobState;
  settled: number | null;
  mode: DependencyMode | null;
  sequence: 'block' | 'continue' | null;
  traceparent: string | null;
  tracestate: string | null;
};

/**
 * A job and up to `limit + 1` of its edges each way, in one statement: its parents through the
 * edge table's key (child_id, parent_id), in parent order, and its dependants through
 * dependencies_parent_idx (parent_id, settled) in whatever order it holds them, each joined to the
 * other job by its id. The limit stops both reads, so a job with a million dependants costs
 * `limit + 1` edges.
 */
export async function jobEdges(db: MysqlExecutor, t: MysqlNaming, id: string, limit: number): Promise<DriverEdges | null> {
  const rows = await db.query<Row>(
    `SELECT 'job' AS side, j.id, j.name, j.queue, j.state, NULL AS settled, j.dependency_mode AS mode, NULL AS sequence, NULL AS traceparent, NULL AS tracestate
     FROM ${t.jobs} j WHERE j.id = ?
     UNION ALL
     (SELECT 'parent', p.id, p.name, p.queue, p.state, d.settled, NULL, d.sequence, p.traceparent, p.tracestate
      FROM ${t.dependencies} d JOIN ${t.jobs} p ON p.id = d.parent_id
      WHERE d.child_id = ? ORDER BY d.parent_id LIMIT ?)
     UNION ALL
     (SELECT 'dependant', c.id, c.name, c.queue, c.state, d.settled, c.dependency_mode, d.sequence, c.traceparent, c.tracestate
      FROM ${t.dependencies} d JOIN ${t.jobs} c ON c.id = d.child_id
      WHERE d.parent_id = ? LIMIT ?)`,
    [id, id, limit + 1, id, limit + 1],
  );
  const job = rows.find((row) => row.side === 'job');
  if (!job) return null;
  const edge = (row: Row, parentState: JobState, mode: DependencyMode | null): EdgeRow => ({
    id: row.id,
    name: row.name,
    queue: row.queue,
    state: row.state,
    settled: Number(row.settled) === 1,
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
}
