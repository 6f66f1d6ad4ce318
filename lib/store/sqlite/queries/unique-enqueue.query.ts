import type { Database } from 'better-sqlite3';
import type { JobState } from '../../../core/index.js';
import type { NewJob } from '../../enqueue-input.js';
import { slotOf, type UniqueHolder, type UniqueReplace } from '../../unique/unique-plan.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import { HOLDING } from './unique-holding.sql.js';

/**
 * The look-ups and rewrites of an enqueue that carries unique keys or windows. SQLite has one writer at a time
 * and these run inside the write transaction, so what they read stays true until it commits; the
 * partial unique index is the guarantee underneath.
 */
export function uniqueEnqueueQueries(db: Database, t: SqliteNaming) {
  const holder = db.prepare(`SELECT id, state, attempt FROM ${t.jobs} WHERE name = ? AND unique_key = ? AND state IN ${HOLDING}`);
  // A debounce's holder has not started; a throttle's is the newest job whose window is open.
  const debounced = db.prepare(`
    SELECT id, state, attempt FROM ${t.jobs}
    WHERE name = ? AND window_key = ? AND window_kind = 'debounce' AND state = 'scheduled' AND attempt = 0
    ORDER BY seq DESC LIMIT 1`);
  const throttled = db.prepare(`
    SELECT id, state, attempt FROM ${t.jobs}
    WHERE name = ? AND window_key = ? AND window_kind = 'throttle' AND window_ends_at > ?
    ORDER BY window_ends_at DESC LIMIT 1`);
  // A holder a limit held back leaves its lane for the claim index with its new run time, since a
  // lane holds only jobs that were due (claim-lanes.query.ts). A debounced holder runs no later
  // than its window's end (a unique-key holder has none).
  const rewrite = db.prepare(`
    UPDATE ${t.jobs} SET payload = @payload, run_at = min(@run_at, coalesce(window_ends_at, @run_at)),
      scheduled_for = min(@run_at, coalesce(window_ends_at, @run_at)), parked_key = NULL, updated_at = @now
    WHERE id = @id AND attempt = 0 AND state IN ('scheduled', 'awaiting_parents')
    RETURNING queue, state, run_at`);
  return {
    /** The stored holders of the keys and windows `jobs` carry at `now`, by slotOf. */
    holders(jobs: readonly NewJob[], now: number): Map<string, UniqueHolder> {
      const found = new Map<string, UniqueHolder>();
      for (const job of jobs) {
        const slot = slotOf(job);
        if (slot === null) continue;
        const row = (
          job.uniqueKey != null
            ? holder.get(job.name, job.uniqueKey)
            : job.window!.kind === 'debounce'
              ? debounced.get(job.name, job.window!.key)
              : throttled.get(job.name, job.window!.key, now)
        ) as { id: string; state: JobState; attempt: number } | undefined;
        if (row) found.set(slot, row);
      }
      return found;
    },
    /** Rewrites holders that have not started; adds the queues now due to `due`. */
    replace(ops: readonly UniqueReplace[], now: number, due: Set<string>): Set<string> {
      const done = new Set<string>();
      for (const op of ops) {
        const runAt = op.runAt ?? now + op.delayMs;
        const row = rewrite.get({ id: op.id, payload: op.payload, run_at: runAt, now }) as { queue: string; state: JobState; run_at: number } | undefined;
        if (!row) continue;
        done.add(op.id);
        if (row.state === 'scheduled' && row.run_at <= now) due.add(row.queue);
      }
      return done;
    },
  };
}
