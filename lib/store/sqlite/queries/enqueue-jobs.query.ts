import type { Database } from 'better-sqlite3';
import type { JobState } from '../../../core/index.js';
import { assertAcyclic, parentsToLookUp, planDependencies } from '../../dependencies/dependency-plan.js';
import { chainSequences, hasSequences, sequenceKeys, type ChainedBatch } from '../../dependencies/sequence-chain.js';
import type { NewJob } from '../../enqueue-input.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import { storedDependencyMode } from '../sqlite-row.js';
import { hasKeys, planUnique, type UniquePlan } from '../../unique/unique-plan.js';
import { enqueueLaneSql } from './enqueue-lane.sql.js';
import { jobStateQuery } from './job-state.query.js';
import { setRateLimitQuery } from './set-rate-limit.query.js';
import { uniqueEnqueueQueries } from './unique-enqueue.query.js';

/**
 * Inserts jobs (a job whose id exists is skipped; a due one whose key or queue holds jobs back now
 * joins its lane, enqueue-lane.query.ts), with their dependency edges and any concurrency
 * limit they declare for a key that has none; a job whose unique key or window is held writes
 * nothing, or rewrites the holder (see planUnique). Runs inside the caller's write transaction, so the
 * parents' states and key holders it reads cannot change before it writes.
 */
export function enqueueJobsQuery(db: Database, t: SqliteNaming) {
  const insert = db.prepare(`
    INSERT INTO ${t.jobs} (id, name, queue, payload, state, run_at, scheduled_for, max_attempts, schedule_id,
                           pending_parents, dependency_mode, concurrency_key, group_key, last_error, finished_at, created_at, updated_at, unique_key, window_kind, window_key, window_ends_at, sequence_key, sequence_mode, batch_id, batch_callback, parent_failed, fails_only, retry, traceparent, tracestate, priority, parked_key)
    VALUES (@id, @name, @queue, @payload, @state, @run_at, @run_at, @max_attempts, @schedule_id,
            @pending_parents, @dependency_mode, @concurrency_key, @group_key, @last_error, @finished_at, @now, @now, @unique_key, @window_kind, @window_key, @window_ends_at, @sequence_key, @sequence_mode, @batch_id, @batch_callback, @parent_failed, @fails_only, @retry, @traceparent, @tracestate, @priority, ${enqueueLaneSql(t)})
    ON CONFLICT (id) DO NOTHING`);
  const exists = db.prepare(`SELECT 1 FROM ${t.jobs} WHERE id = ?`).pluck();
  const parentState = jobStateQuery(db, t);
  const edge = db.prepare(`INSERT INTO ${t.dependencies} (child_id, parent_id, settled, sequence) VALUES (?, ?, ?, ?)`);
  // A job whose sequence edge is open: its turn has not come, whether or not it has ended.
  const waitsInLine = db.prepare(`SELECT 1 FROM ${t.dependencies} WHERE child_id = ? AND sequence IS NOT NULL AND settled = 0 LIMIT 1`).pluck();
  const tailOf = db.prepare(`SELECT tail_id FROM ${t.sequences} WHERE key = ?`).pluck();
  const moveTail = db.prepare(`INSERT INTO ${t.sequences} (key, tail_id) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET tail_id = excluded.tail_id`);
  const rates = setRateLimitQuery(db, t);
  const declare = db.prepare(`INSERT INTO ${t.limits} (key, max, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING`);
  // A declared limit is audited like a set one: verify reads a limit's history from the audit log.
  const declared = db.prepare(`INSERT INTO ${t.audit} (at, actor, action, target, detail) VALUES (?, 'enqueue', 'limit.declare', ?, ?)`);
  const unique = uniqueEnqueueQueries(db, t);
  const states = (ids: readonly string[]) => {
    const found = new Map<string, JobState>();
    for (const id of ids) {
      const state = parentState(id);
      if (state) found.set(id, state);
    }
    return found;
  };
  /** Appends the batch's sequenced jobs to their sequences (a tail that is gone leaves nothing to wait for). */
  const chain = (jobs: readonly NewJob[]): ChainedBatch => {
    const tails = new Map<string, string | null>();
    for (const key of sequenceKeys(jobs)) {
      const tail = tailOf.get(key) as string | undefined;
      tails.set(key, tail !== undefined && exists.get(tail) ? tail : null);
    }
    return chainSequences(jobs, tails, new Set(jobs.filter((job) => exists.get(job.id)).map((job) => job.id)));
  };
  return (given: readonly NewJob[], now: number): EnqueueWrite => {
    // In the caller's write transaction, so no other writer can take a key or a sequence's tail
    // between look-up and insert.
    const chained = hasSequences(given) ? chain(given) : null;
    const jobs = chained?.jobs ?? given;
    const keyed = hasKeys(jobs);
    if (keyed || chained) assertAcyclic(jobs);
    const notStored = keyed ? jobs.filter((job) => !exists.get(job.id)) : null;
    const plan = notStored ? planUnique(notStored, unique.holders(notStored, now)) : null;
    const batch = plan ? plan.insert : jobs;
    const stored = states(parentsToLookUp(batch));
    const inLine = new Set(batch.flatMap((job) => (job.sequenceAfter !== undefined && waitsInLine.get(job.sequenceAfter) !== undefined ? [job.sequenceAfter] : [])));
    // A job whose id exists writes nothing.
    const plans = planDependencies(batch, stored, inLine).filter((planned) => !exists.get(planned.job.id));
    const created = new Set<string>();
    const due = new Set<string>();
    for (const { job, state, pendingParents, lastError, parentFailed, edges } of plans) {
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
        // An on_failure job is stored on_any_terminal with fails_only set (migration 0023).
        ...storedDependencyMode(job.dependencyMode),
        concurrency_key: job.concurrencyKey ?? null,
        group_key: job.group ?? null,
        unique_key: job.uniqueKey ?? null,
        window_kind: job.window?.kind ?? null,
        window_key: job.window?.key ?? null,
        window_ends_at: job.window ? now + job.window.endsInMs : null,
        sequence_key: job.sequence?.key ?? null,
        sequence_mode: job.sequence?.afterFailure ?? null,
        batch_id: job.batchId ?? null,
        batch_callback: job.batchCallback ?? null,
        parent_failed: parentFailed ? 1 : 0,
        retry: job.retry ?? null,
        traceparent: job.traceparent ?? null,
        tracestate: job.tracestate ?? null,
        priority: job.priority ?? 0,
        last_error: lastError,
        finished_at: state === 'cancelled' ? now : null,
        due: state === 'scheduled' && runAt <= now ? 1 : 0,
        now,
      });
      for (const e of edges) edge.run(job.id, e.parentId, e.settled ? 1 : 0, e.sequence ?? null);
      if (job.concurrencyKey && job.concurrencyLimit && declare.run(`key:${job.concurrencyKey}`, job.concurrencyLimit, now).changes === 1) {
        declared.run(now, `key:${job.concurrencyKey}`, JSON.stringify({ max: job.concurrencyLimit }));
      }
      if (job.concurrencyKey && job.rateLimit) rates.declare(`key:${job.concurrencyKey}`, job.rateLimit, now);
      created.add(job.id);
      if (state === 'scheduled' && runAt <= now) due.add(job.queue);
    }
    const replaced = plan && plan.replace.length > 0 ? unique.replace(plan.replace, now, due) : new Set<string>();
    for (const [key, tail] of chained?.tails ?? []) moveTail.run(key, tail);
    return { created, due, plan, replaced };
  };
}

/** What one batch wrote: ids inserted, queues with work due now, and what its unique keys did. */
export interface EnqueueWrite {
  readonly created: Set<string>;
  readonly due: Set<string>;
  readonly plan: UniquePlan | null;
  /** Stored holders whose payload and run time were rewritten. */
  readonly replaced: Set<string>;
}
