import type { Database } from 'better-sqlite3';
import type { JobState } from '../../../core/index.js';
import type { NewJob } from '../../enqueue-input.js';
import { uniqueSlot, type UniqueHolder, type UniqueReplace } from '../../unique/unique-plan.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import { HOLDING } from './unique-holding.sql.js';

/**
 * The look-ups and rewrites of an enqueue that carries unique keys. SQLite has one writer at a time
 * and these run inside the write transaction, so what they read stays true until it commits; the
 * partial unique index is the guarantee underneath.
 */
export function uniqueEnqueueQueries(db: Database, t: SqliteNaming) {
  const holder = db.prepare(`SELECT id, state, attempt FROM ${t.jobs} WHERE name = ? AND unique_key = ? AND state IN ${HOLDING}`);
  // A holder a limit held back leaves its lane for the claim index with its new run time, since a
  // lane holds only jobs that were due (claim-lanes.query.ts).
  const rewrite = db.prepare(`
    UPDATE ${t.jobs} SET payload = @payload, run_at = @run_at, scheduled_for = @run_at, parked_key = NULL, updated_at = @now
    WHERE id = @id AND attempt = 0 AND state IN ('scheduled', 'awaiting_parents')
    RETURNING queue, state`);
  return {
    /** The stored holders of the keys `jobs` carry, by uniqueSlot. */
    holders(jobs: readonly NewJob[]): Map<string, UniqueHolder> {
      const found = new Map<string, UniqueHolder>();
      for (const job of jobs) {
        if (job.uniqueKey == null) continue;
        const row = holder.get(job.name, job.uniqueKey) as { id: string; state: JobState; attempt: number } | undefined;
        if (row) found.set(uniqueSlot(job.name, job.uniqueKey), row);
      }
      return found;
    },
    /** Rewrites holders that have not started; adds the queues now due to `due`. */
    replace(ops: readonly UniqueReplace[], now: number, due: Set<string>): Set<string> {
      const done = new Set<string>();
      for (const op of ops) {
        const runAt = op.runAt ?? now + op.delayMs;
        const row = rewrite.get({ id: op.id, payload: op.payload, run_at: runAt, now }) as { queue: string; state: JobState } | undefined;
        if (!row) continue;
        done.add(op.id);
        if (row.state === 'scheduled' && runAt <= now) due.add(row.queue);
      }
      return done;
    },
  };
}
