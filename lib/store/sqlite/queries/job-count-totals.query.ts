import type { Database } from 'better-sqlite3';
import type { JobState } from '../../../core/index.js';
import type { JobCountTotals } from '../../job-store.js';
import type { SqliteNaming } from '../sqlite-naming.js';

/**
 * Stored jobs per state over every queue, and the number of queues the listing shows, summed in
 * the database from the counts the triggers keep (migration 0012) and the queues' pause rows: a row
 * per queue and state is read, never the jobs table.
 */
export function jobCountTotalsQuery(db: Database, t: SqliteNaming) {
  const totals = db.prepare(`SELECT state, sum(count) AS count FROM ${t.counts} WHERE count <> 0 GROUP BY state`);
  const queues = db.prepare(`SELECT count(*) AS n FROM (SELECT queue FROM ${t.counts} WHERE count <> 0 UNION SELECT name FROM ${t.queues})`);
  return (): JobCountTotals => {
    const counts: Partial<Record<JobState, number>> = {};
    for (const row of totals.all() as { state: JobState; count: number }[]) counts[row.state] = row.count;
    return { counts, queues: (queues.get() as { n: number }).n };
  };
}
