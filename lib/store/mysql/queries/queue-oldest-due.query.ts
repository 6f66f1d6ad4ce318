import type { DriverOldestDue } from '../../operator-reads.js';
import type { MysqlExecutor } from '../mysql-executor.js';
import { fromMysqlInstant } from '../mysql-instant.js';
import type { MysqlNaming } from '../mysql-naming.js';
import { dueInRunOrder } from './due-in-run-order.sql.js';

type Row = { queue: string | null; n: number; oldest: string; newest: string };

/**
 * The oldest due job per queue among the first `scan` due jobs in run-time order
 * (due-in-run-order.sql.ts), with each queue's due count among them, how many were examined and
 * the run time of the last. The claim index does not carry the queue, so one probe per queue could
 * not stop early: a queue with nothing due would walk every due job of the others. One bounded read
 * answers every queue at once instead. The merge reads the index alone; only the `scan` jobs it
 * keeps are looked up for their queue, and the ROLLUP row (queue NULL; the column never is) sums
 * them all. The clock is read once into a session variable, so every branch and the answer's
 * `now` agree.
 */
export async function queueOldestDue(db: MysqlExecutor, t: MysqlNaming, queues: readonly string[] | null, scan: number): Promise<DriverOldestDue> {
  const [, clock, rows] = (await db.script([
    { sql: 'SET @due_now = UTC_TIMESTAMP(3)' },
    { sql: 'SELECT @due_now AS now' },
    {
      sql: `SELECT j.queue, COUNT(*) AS n, MIN(d.run_at) AS oldest, MAX(d.run_at) AS newest
            FROM ${dueInRunOrder(t, '@due_now', scan)} d JOIN ${t.jobs} j ON j.seq = d.seq
            GROUP BY j.queue WITH ROLLUP`,
    },
  ])) as [unknown, [{ now: string }], Row[]];
  const wanted = queues === null ? null : new Set(queues);
  const oldest = new Map<string, number>();
  const due = new Map<string, number>();
  let examined = 0;
  let last: number | null = null;
  for (const row of rows) {
    if (row.queue === null) {
      examined = Number(row.n);
      last = fromMysqlInstant(row.newest).getTime();
    } else if (wanted === null || wanted.has(row.queue)) {
      oldest.set(row.queue, fromMysqlInstant(row.oldest).getTime());
      due.set(row.queue, Number(row.n));
    }
  }
  return { oldest, due, examined, last, now: fromMysqlInstant(clock[0].now).getTime() };
}
