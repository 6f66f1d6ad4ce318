import type { JobState } from '../../core/index.js';
import type { JobRow } from '../job-row.js';
import { limitKeysOf } from '../limit-room.js';
import {
  throughputWindow,
  type DriverEdges,
  type DriverEdgesParams,
  type DriverHolders,
  type DriverHoldersParams,
  type DriverOldestDue,
  type DriverOldestDueParams,
  type DriverThroughput,
  type DriverThroughputParams,
  type EdgeRow,
} from '../operator-reads.js';
import type { MemoryState } from './memory-tables.js';

const DONE: ReadonlySet<JobState> = new Set(['succeeded', 'cancelled']);

/**
 * The operator's views of edges, limits, due work and throughput. Each examines the same rows, in
 * the same order and up to the same bounds, as the SQL stores' indexes give them, so every store
 * agrees on where a bounded read stops.
 */
export class MemoryOperatorReads {
  constructor(private readonly state: MemoryState) {}

  jobEdges({ id, limit }: DriverEdgesParams): DriverEdges | null {
    const { jobs, parents, children } = this.state.tables;
    const job = jobs.get(id);
    if (!job) return null;
    const parentRows: EdgeRow[] = [];
    for (const parentId of parents.get(id) ?? []) {
      if (parentRows.length > limit) break;
      const parent = jobs.get(parentId);
      const edge = (children.get(parentId) ?? []).find((e) => e.childId === id);
      if (!parent || !edge) continue;
      parentRows.push({ ...edgeEnd(parent), settled: edge.settled, parentState: parent.state, mode: job.dependencyMode, sequence: edge.sequence ?? null });
    }
    const dependantRows: EdgeRow[] = [];
    for (const edge of children.get(id) ?? []) {
      if (dependantRows.length > limit) break;
      const child = jobs.get(edge.childId);
      if (!child) continue;
      dependantRows.push({ ...edgeEnd(child), settled: edge.settled, parentState: job.state, mode: child.dependencyMode, sequence: edge.sequence ?? null });
    }
    return { parents: parentRows, dependants: dependantRows };
  }

  limitHolders({ key, limit }: DriverHoldersParams): DriverHolders {
    const { jobs, concurrencyLimits, slotHolders } = this.state.tables;
    const max = concurrencyLimits.get(key);
    if (max === undefined) return { max: null, holders: [] };
    const now = this.state.clock.now();
    const holders = [...jobs.values()]
      .filter((row) => row.state === 'running' && row.leasedUntil !== null && row.leasedUntil > now && slotHolders.has(row.id))
      .filter((row) => limitKeysOf(row.queue, row.concurrencyKey).includes(key))
      .sort((a, b) => a.leasedUntil! - b.leasedUntil! || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .slice(0, limit + 1)
      .map((row) => ({ jobId: row.id, name: row.name, queue: row.queue, workerId: row.workerId!, attempt: row.attempt, leasedUntil: new Date(row.leasedUntil!) }));
    return { max, holders };
  }

  queueOldestDue({ queues, scan }: DriverOldestDueParams): DriverOldestDue {
    const now = this.state.clock.now();
    const due = [...this.state.tables.jobs.values()]
      .filter((row) => row.state === 'scheduled' && row.runAt <= now)
      .sort((a, b) => a.runAt - b.runAt || a.seq - b.seq)
      .slice(0, scan);
    const wanted = queues === null ? null : new Set(queues);
    const oldest = new Map<string, number>();
    const counted = new Map<string, number>();
    for (const row of due) {
      if (wanted !== null && !wanted.has(row.queue)) continue;
      if (!oldest.has(row.queue)) oldest.set(row.queue, row.runAt);
      counted.set(row.queue, (counted.get(row.queue) ?? 0) + 1);
    }
    return { oldest, due: counted, examined: due.length, last: due.at(-1)?.runAt ?? null, now };
  }

  jobThroughput({ since, bucketMs, queue, scan }: DriverThroughputParams): DriverThroughput {
    const now = this.state.clock.now();
    const { from } = throughputWindow(since, bucketMs, now);
    const newestFinished = (test: (state: JobState) => boolean) =>
      [...this.state.tables.jobs.values()]
        .filter((row) => test(row.state) && row.finishedAt !== null && row.finishedAt >= from)
        .sort((a, b) => b.finishedAt! - a.finishedAt! || b.seq - a.seq)
        .slice(0, scan);
    const done = newestFinished((state) => DONE.has(state));
    const dead = newestFinished((state) => state === 'dead_lettered');
    const counts = new Map<string, { bucket: number; state: JobState; count: number }>();
    for (const row of [...done, ...dead]) {
      if (queue !== null && row.queue !== queue) continue;
      const bucket = Math.floor((row.finishedAt! - from) / bucketMs);
      const entry = counts.get(`${bucket}:${row.state}`) ?? { bucket, state: row.state, count: 0 };
      entry.count += 1;
      counts.set(`${bucket}:${row.state}`, entry);
    }
    const read = (rows: JobRow[]) => ({ rows: rows.length, oldest: rows.at(-1)?.finishedAt ?? null });
    return { counts: [...counts.values()], read: { done: read(done), dead: read(dead) }, now };
  }
}

function edgeEnd(row: JobRow): Pick<EdgeRow, 'id' | 'name' | 'queue' | 'state' | 'traceparent' | 'tracestate'> {
  return { id: row.id, name: row.name, queue: row.queue, state: row.state, traceparent: row.traceparent, tracestate: row.tracestate };
}
