import type { Database } from 'better-sqlite3';
import type { JobState } from '../../../core/index.js';
import { parentsToLookUp, planDependencies } from '../../dependencies/dependency-plan.js';
import type { NewJob } from '../../enqueue-input.js';
import type { SqliteNaming } from '../sqlite-naming.js';

/**
 * Inserts jobs (a job whose id exists is skipped), with their dependency edges and any concurrency
 * limit they declare for a key that has none. Runs inside the caller's write transaction, so the
 * parents' states it reads cannot change before the edges are written.
 */
export function enqueueJobsQuery(db: Database, t: SqliteNaming) {
  const insert = db.prepare(`
    INSERT INTO ${t.jobs} (id, name, queue, payload, state, run_at, scheduled_for, max_attempts, schedule_id,
                           pending_parents, dependency_mode, concurrency_key, last_error, finished_at, created_at, updated_at)
    VALUES (@id, @name, @queue, @payload, @state, @run_at, @run_at, @max_attempts, @schedule_id,
            @pending_parents, @dependency_mode, @concurrency_key, @last_error, @finished_at, @now, @now)
    ON CONFLICT (id) DO NOTHING`);
  const exists = db.prepare(`SELECT 1 FROM ${t.jobs} WHERE id = ?`).pluck();
  const parentState = db.prepare(`SELECT state FROM ${t.jobs} WHERE id = ?`).pluck();
  const edge = db.prepare(`INSERT INTO ${t.dependencies} (child_id, parent_id, settled) VALUES (?, ?, ?)`);
  const declare = db.prepare(`INSERT INTO ${t.limits} (key, max, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING`);
  return (jobs: readonly NewJob[], now: number): { created: Set<string>; due: Set<string> } => {
    const stored = new Map<string, JobState>();
    for (const id of parentsToLookUp(jobs)) {
      const state = parentState.get(id) as JobState | undefined;
      if (state) stored.set(id, state);
    }
    // The whole batch is planned (and checked) as written; a job whose id exists writes nothing.
    const plans = planDependencies(jobs, stored).filter((plan) => !exists.get(plan.job.id));
    const created = new Set<string>();
    const due = new Set<string>();
    for (const { job, state, pendingParents, lastError, edges } of plans) {
      const runAt = job.runAt ?? now + job.delayMs;
      insert.run({
        id: job.id,
        name: job.name,
        queue: job.queue,
        payload: job.payload,
        state,
        run_at: runAt,
        max_attempts: job.maxAttempts,
        schedule_id: job.scheduleId ?? null,
        pending_parents: pendingParents,
        dependency_mode: job.dependencyMode ?? null,
        concurrency_key: job.concurrencyKey ?? null,
        last_error: lastError,
        finished_at: state === 'cancelled' ? now : null,
        now,
      });
      for (const e of edges) edge.run(job.id, e.parentId, e.settled ? 1 : 0);
      if (job.concurrencyKey && job.concurrencyLimit) declare.run(`key:${job.concurrencyKey}`, job.concurrencyLimit, now);
      created.add(job.id);
      if (state === 'scheduled' && runAt <= now) due.add(job.queue);
    }
    return { created, due };
  };
}
