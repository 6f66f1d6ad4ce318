import type { Database } from 'better-sqlite3';
import type { NewJob } from '../../enqueue-input.js';
import type { SqliteNaming } from '../sqlite-naming.js';

/** Inserts jobs; a job whose id exists is skipped. Returns the ids written. */
export function enqueueJobsQuery(db: Database, t: SqliteNaming) {
  const insert = db.prepare(`
    INSERT INTO ${t.jobs} (id, name, queue, payload, state, run_at, scheduled_for, max_attempts, schedule_id, created_at, updated_at)
    VALUES (@id, @name, @queue, @payload, 'scheduled', @run_at, @run_at, @max_attempts, @schedule_id, @now, @now)
    ON CONFLICT (id) DO NOTHING`);
  return (jobs: readonly NewJob[], now: number): Set<string> => {
    const created = new Set<string>();
    for (const job of jobs) {
      const runAt = job.runAt ?? now + job.delayMs;
      const info = insert.run({
        id: job.id,
        name: job.name,
        queue: job.queue,
        payload: job.payload,
        run_at: runAt,
        max_attempts: job.maxAttempts,
        schedule_id: job.scheduleId ?? null,
        now,
      });
      if (info.changes === 1) created.add(job.id);
    }
    return created;
  };
}
