import type { Database } from 'better-sqlite3';
import type { DriverOldestDue } from '../../operator-reads.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import { dueInRunOrderQuery } from './due-in-run-order.query.js';

/**
 * The oldest due job per queue among the first `scan` due jobs at `now` in run-time order
 * (due-in-run-order.query.ts). The claim index does not carry the queue, so one probe per queue
 * could not stop early; one bounded read answers every queue at once, and says how far it got. The
 * first seen of each queue is its oldest.
 */
export function queueOldestDueQuery(db: Database, t: SqliteNaming) {
  const due = dueInRunOrderQuery(db, t);
  return (queues: readonly string[] | null, scan: number, now: number): DriverOldestDue => {
    const wanted = queues === null ? null : new Set(queues);
    const oldest = new Map<string, number>();
    const counted = new Map<string, number>();
    let examined = 0;
    let last: number | null = null;
    for (const { queue, run_at: runAt } of due(now, scan)) {
      examined += 1;
      last = runAt;
      if (wanted !== null && !wanted.has(queue)) continue;
      if (!oldest.has(queue)) oldest.set(queue, runAt);
      counted.set(queue, (counted.get(queue) ?? 0) + 1);
    }
    return { oldest, due: counted, examined, last, now };
  };
}
