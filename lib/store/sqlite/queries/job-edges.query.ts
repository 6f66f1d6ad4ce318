import type { Database } from 'better-sqlite3';
import type { DependencyMode, JobState } from '../../../core/index.js';
import type { DriverEdges, EdgeRow } from '../../operator-reads.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import { SQLITE_MODE_OF } from '../sqlite-row.js';

type Other = { id: string; name: string; queue: string; state: JobState; settled: number; mode: DependencyMode | null; sequence: 'block' | 'continue' | null; traceparent: string | null; tracestate: string | null };

/**
 * A job and up to `limit + 1` of its edges each way: its parents through the edge table's key
 * (child_id, parent_id), in parent order, and its dependants through the parent index (migration
 * 0011), each joined to the other job by its id. The limit stops both reads, whatever the fan-out.
 */
export function jobEdgesQuery(db: Database, t: SqliteNaming) {
  const job = db.prepare(`SELECT j.id, j.state, ${SQLITE_MODE_OF('j')} AS mode FROM ${t.jobs} j WHERE j.id = ?`);
  const parents = db.prepare(`
    SELECT p.id, p.name, p.queue, p.state, d.settled, NULL AS mode, d.sequence, p.traceparent, p.tracestate
    FROM ${t.dependencies} d JOIN ${t.jobs} p ON p.id = d.parent_id
    WHERE d.child_id = ? ORDER BY d.parent_id LIMIT ?`);
  const dependants = db.prepare(`
    SELECT c.id, c.name, c.queue, c.state, d.settled, ${SQLITE_MODE_OF('c')} AS mode, d.sequence, c.traceparent, c.tracestate
    FROM ${t.dependencies} d JOIN ${t.jobs} c ON c.id = d.child_id
    WHERE d.parent_id = ? LIMIT ?`);
  return (id: string, limit: number): DriverEdges | null => {
    const self = job.get(id) as { id: string; state: JobState; mode: DependencyMode | null } | undefined;
    if (!self) return null;
    const edge = (row: Other, parentState: JobState, mode: DependencyMode | null): EdgeRow => ({
      id: row.id,
      name: row.name,
      queue: row.queue,
      state: row.state,
      settled: row.settled === 1,
      parentState,
      mode,
      sequence: row.sequence,
      traceparent: row.traceparent,
      tracestate: row.tracestate,
    });
    return {
      parents: (parents.all(id, limit + 1) as Other[]).map((row) => edge(row, row.state, self.mode)),
      dependants: (dependants.all(id, limit + 1) as Other[]).map((row) => edge(row, self.state, row.mode)),
    };
  };
}
