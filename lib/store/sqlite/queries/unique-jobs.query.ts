import type { Database } from 'better-sqlite3';
import type { JobState } from '../../../core/index.js';
import type { NewJob } from '../../enqueue-input.js';
import type { JobRow } from '../../job-row.js';
import { uniqueKeyTakenError, uniqueSlot, type UniqueHolder, type UniqueReplace } from '../../unique/unique-plan.js';
import type { SqliteNaming } from '../sqlite-naming.js';

const HOLDING = `('scheduled', 'awaiting_parents', 'running')`;

/**
 * Unique-key look-ups and rewrites. SQLite has one writer at a time and these run inside the
 * write transaction, so what they read stays true until it commits; the partial unique index is
 * the guarantee underneath.
 */
export function uniqueJobsQueries(db: Database, t: SqliteNaming) {
  const holder = db.prepare(`SELECT id, state, attempt FROM ${t.jobs} WHERE name = ? AND unique_key = ? AND state IN ${HOLDING}`);
  const other = db.prepare(`SELECT id FROM ${t.jobs} WHERE name = ? AND unique_key = ? AND state IN ${HOLDING} AND id <> ?`).pluck();
  const rewrite = db.prepare(`
    UPDATE ${t.jobs} SET payload = @payload, run_at = @run_at, scheduled_for = @run_at, updated_at = @now
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
    /** Another unfinished job that holds `key` for `name`, besides `jobId`. */
    otherHolder(name: string, key: string, jobId: string): string | null {
      return (other.get(name, key, jobId) as string | undefined) ?? null;
    },
  };
}

/** Refuses a replay that would give a job back a key another unfinished job holds. */
export function guardReplaySqlite(job: JobRow | null, unique: ReturnType<typeof uniqueJobsQueries>): void {
  if (!job || job.uniqueKey === null || (job.state !== 'dead_lettered' && job.state !== 'quarantined')) return;
  const holderId = unique.otherHolder(job.name, job.uniqueKey, job.id);
  if (holderId !== null) throw uniqueKeyTakenError(job, job.uniqueKey, holderId);
}
