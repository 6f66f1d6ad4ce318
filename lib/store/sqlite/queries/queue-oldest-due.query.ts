import type { Database } from 'better-sqlite3';
import type { DriverOldestDue } from '../../operator-reads.js';
import type { SqliteNaming } from '../sqlite-naming.js';

/**
 * The oldest due job per queue among the first `scan` due jobs at `now`, read from the start of the
 * claim index (run_at, seq) as a claim reads it. The index does not carry the queue, so one probe
 * per queue could not stop early; one bounded read answers every queue at once, and says how far
 * it got. Rows are stepped one by one; the first seen of each queue is its oldest.
 */
export function queueOldestDueQuery(db: Database, t: SqliteNaming) {
  const due = db.prepare(`SELECT queue, run_at FROM ${t.jobs} WHERE state = 'scheduled' AND run_at <= ? ORDER BY run_at, seq LIMIT ?`).raw();
  return (queues: readonly string[] | null, scan: number, now: number): DriverOldestDue => {
    const wanted = queues === null ? null : new Set(queues);
    const oldest = new Map<string, number>();
    const counted = new Map<string, number>();
    let examined = 0;
    let last: number | null = null;
    for (const [queue, runAt] of due.iterate(now, scan) as IterableIterator<[string, number]>) {
      examined += 1;
      last = runAt;
      if (wanted !== null && !wanted.has(queue)) continue;
      if (!oldest.has(queue)) oldest.set(queue, runAt);
      counted.set(queue, (counted.get(queue) ?? 0) + 1);
    }
    return { oldest, due: counted, examined, last, now };
  };
}
