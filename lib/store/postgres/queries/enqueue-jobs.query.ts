import type { JobState } from '../../../core/index.js';
import type { PlannedJob } from '../../dependencies/dependency-plan.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { pgInstant } from '../pg-instant.js';
import { enqueueLane } from './claim-lanes.sql.js';
import { PARENT_GUARD_CTES, PARENT_GUARD_OK, PARENT_GUARD_RESULT, type GuardedEnqueue } from './parent-guard.sql.js';

/**
 * Inserts a batch in one statement: the jobs (a job whose id exists is skipped, which is how a
 * second mint of one occurrence becomes a no-op; a due one whose key or queue holds jobs back now
 * joins its lane, claim-lanes.sql.ts, and a due grouped one its group's lane, docs/groups.md), their dependency edges, the concurrency limits
 * they declare for keys that have none yet (each audited as \`limit.declare\`, the record verify reads
 * the limit's history from), and one wake-up hint per queue with work due now,
 * which PostgreSQL delivers when the surrounding transaction commits. A declared limit is written
 * pending, without slots: the jobs that already run under its key must hold slots of it, and only
 * a transaction of the store's own, under the limits lock, can count them (postgres-limits.ts).
 * Until the next claim provisions it, the key counts as full.
 *
 * A batch whose ids the store generated itself is inserted without `ON CONFLICT`: no stored job can
 * hold such an id, and the speculative insertion that `ON CONFLICT` does for every row is a sizeable
 * share of a bulk enqueue's time. Should a generated id ever collide after all, the insert fails
 * with a unique violation instead of skipping a job nobody had enqueued. It answers with a count,
 * not every id, since each of them was inserted.
 */
export function enqueueJobsQuery(t: PostgresNaming) {
  // The arrays are read through scalar subqueries so that PostgreSQL plans the statement once: it
  // sizes `unnest` of a constant array by its length but of a parameter at 10 rows, so the custom
  // plan of a small batch always looks cheaper than the generic one, and each enqueue would be
  // planned anew (bench/diagnose/plan-cache.mjs). Behind a subquery both plans guess 10 rows, the
  // custom plan costs its planning on top, and PostgreSQL keeps the generic plan after its fifth
  // execution, the plan a large batch gets anyway.
  // Batches that carry unique keys, windows, sequences, retry overrides, trace contexts, priorities, groups, a batch of
  // jobEnqueueBatch or an on_failure job a failed parent already released send fifteen more arrays, and a guarded
  // batch the parents to lock (parent-guard.sql.ts); the text of a plain batch, and so its plan, is unchanged.
  const text = (skipExisting: boolean, extended: boolean, guarded: boolean) => `
    WITH ${guarded ? PARENT_GUARD_CTES(t, extended ? '$35' : '$20') : ''} input AS (
      SELECT r.*, date_trunc('milliseconds', COALESCE(r.run_at, now() + r.delay_ms * interval '1 millisecond')) AS at
      FROM unnest((SELECT $1::uuid[]), $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::bigint[], $7::integer[], $9::uuid[],
                  $10::text[], $11::integer[], $12::text[], $13::text[], $14::text[]${extended ? ', $20::text[], $21::text[], $22::text[], $23::text[], $24::smallint[], $25::text[], $26::text[], $27::bigint[], $28::text[], $29::text[], $31::uuid[], $32::text[], $33::boolean[], $34::text[]' : ''})
        WITH ORDINALITY AS r(id, name, queue, payload, run_at, delay_ms, max_attempts, schedule_id,
                             state, pending_parents, dependency_mode, concurrency_key, last_error${extended ? ', unique_key, retry, traceparent, tracestate, priority, window_kind, window_key, window_ends_in, sequence_key, sequence_mode, batch_id, batch_callback, parent_failed, group_key' : ''}, ord)
      ${guarded ? `WHERE ${PARENT_GUARD_OK}` : ''}
    ), lanes AS (
      SELECT g.queue, g.concurrency_key, ${enqueueLane(t, 'g.queue', 'g.concurrency_key')} AS lane
      FROM (SELECT DISTINCT queue, concurrency_key FROM input WHERE state = 'scheduled' AND at <= now()) g
    ), inserted AS (
      INSERT INTO ${t.jobs} (id, name, queue, payload, state, run_at, scheduled_for, max_attempts, schedule_id,
                             pending_parents, dependency_mode, concurrency_key, last_error, finished_at, parked_key${extended ? ', unique_key, retry, traceparent, tracestate, priority, window_kind, window_key, window_ends_at, sequence_key, sequence_mode, batch_id, batch_callback, parent_failed, group_key' : ''})
      SELECT i.id, i.name, i.queue, i.payload::jsonb, i.state, i.at, i.at, i.max_attempts, i.schedule_id,
             i.pending_parents, i.dependency_mode, i.concurrency_key, i.last_error, CASE WHEN i.state = 'cancelled' THEN now() END,
             CASE WHEN i.state = 'scheduled' AND i.at <= now() THEN ${extended ? "COALESCE(l.lane, 'group:' || i.group_key)" : 'l.lane'} END${extended ? ", i.unique_key, i.retry::jsonb, i.traceparent, i.tracestate, i.priority, i.window_kind, i.window_key, date_trunc('milliseconds', now() + i.window_ends_in * interval '1 millisecond'), i.sequence_key, i.sequence_mode, i.batch_id, i.batch_callback, i.parent_failed, i.group_key" : ''}
      FROM input i LEFT JOIN lanes l ON l.queue = i.queue AND l.concurrency_key IS NOT DISTINCT FROM i.concurrency_key
      ORDER BY i.ord
      ${skipExisting ? 'ON CONFLICT (id) DO NOTHING' : ''}
      RETURNING id, queue, run_at, state
    ), edges AS (
      INSERT INTO ${t.dependencies} (child_id, parent_id, settled${extended ? ', sequence' : ''})
      SELECT e.* FROM unnest((SELECT $15::uuid[]), $16::uuid[], $17::boolean[]${extended ? ', $30::text[]' : ''}) AS e(child_id, parent_id, settled${extended ? ', sequence' : ''})
      WHERE e.child_id IN (SELECT id FROM inserted)
    ), declared AS (
      INSERT INTO ${t.limits} (key, max, pending)
      SELECT DISTINCT ON (k.key) k.key, k.max, true FROM unnest((SELECT $18::text[]), $19::integer[]) AS k(key, max)
      ${guarded ? `WHERE ${PARENT_GUARD_OK}` : ''} ORDER BY k.key
      ON CONFLICT (key) DO NOTHING
      RETURNING key, max
    ), declared_audit AS (
      INSERT INTO ${t.audit} (actor, action, target, detail) SELECT 'enqueue', 'limit.declare', key, jsonb_build_object('max', max) FROM declared
    ), wake AS (
      SELECT pg_notify($8, queue) FROM (SELECT DISTINCT queue FROM inserted WHERE state = 'scheduled' AND run_at <= now()) due
    )
    ${guarded ? PARENT_GUARD_RESULT : `${skipExisting ? 'SELECT id' : 'SELECT count(*) AS n'} FROM inserted, (SELECT count(*) FROM wake) AS hinted`}`;
  // Indexed by [skipExisting][extended][guarded].
  const texts = [false, true].map((skip) => [false, true].map((extended) => [false, true].map((guarded) => text(skip, extended, guarded))));

  /**
   * With `guard` (the parents outside the batch that the plan leaves open edges to), the statement
   * first key-share-locks those parents and writes nothing unless it locked every one and none has
   * finished: see parent-guard.sql.ts.
   */
  async function run(db: PgExecutor, plans: readonly PlannedJob[], guard: readonly string[]): Promise<GuardedEnqueue> {
    const jobs = plans.map((p) => p.job);
    const edges = plans.flatMap((p) => p.edges.map((e) => ({ child: p.job.id, ...e })));
    const keys = new Map<string, number>();
    for (const job of jobs) if (job.concurrencyKey && job.concurrencyLimit && !keys.has(job.concurrencyKey)) keys.set(job.concurrencyKey, job.concurrencyLimit);
    const allFresh = jobs.every((j) => j.freshId === true);
    const extended =
      jobs.some((j) => j.uniqueKey != null || j.window !== undefined || j.sequence !== undefined || j.retry != null || j.traceparent != null || (j.priority ?? 0) !== 0 || j.batchId !== undefined || j.group != null) ||
      plans.some((p) => p.parentFailed);
    const guarded = guard.length > 0;
    const statement = texts[allFresh ? 0 : 1]![extended ? 1 : 0]![guarded ? 1 : 0]!;
    const rows = await db.query<{ id: string | null; parent_id?: string | null; parent_state?: JobState | null }>(statement, [
      jobs.map((j) => j.id),
      jobs.map((j) => j.name),
      jobs.map((j) => j.queue),
      jobs.map((j) => j.payload),
      jobs.map((j) => (j.runAt === null ? null : pgInstant(j.runAt))),
      jobs.map((j) => j.delayMs),
      jobs.map((j) => j.maxAttempts),
      t.channel,
      jobs.map((j) => j.scheduleId ?? null),
      plans.map((p) => p.state),
      plans.map((p) => p.pendingParents),
      jobs.map((j) => j.dependencyMode ?? null),
      jobs.map((j) => j.concurrencyKey ?? null),
      plans.map((p) => p.lastError),
      edges.map((e) => e.child),
      edges.map((e) => e.parentId),
      edges.map((e) => e.settled),
      [...keys.keys()].map((k) => `key:${k}`),
      [...keys.values()],
      ...(extended
        ? [
            jobs.map((j) => j.uniqueKey ?? null),
            jobs.map((j) => j.retry ?? null),
            jobs.map((j) => j.traceparent ?? null),
            jobs.map((j) => j.tracestate ?? null),
            jobs.map((j) => j.priority ?? 0),
            jobs.map((j) => j.window?.kind ?? null),
            jobs.map((j) => j.window?.key ?? null),
            jobs.map((j) => j.window?.endsInMs ?? null),
            jobs.map((j) => j.sequence?.key ?? null),
            jobs.map((j) => j.sequence?.afterFailure ?? null),
            edges.map((e) => e.sequence ?? null),
            jobs.map((j) => j.batchId ?? null),
            jobs.map((j) => j.batchCallback ?? null),
            plans.map((p) => p.parentFailed),
            jobs.map((j) => j.group ?? null),
          ]
        : []),
      ...(guarded ? [guard] : []),
    ]);
    if (guarded) return readGuarded(rows);
    // Every job of a fresh batch was inserted, or the statement failed, so it returns only a count.
    return { ok: true, ids: new Set(allFresh ? jobs.map((j) => j.id) : rows.map((row) => row.id!)) };
  }

  return Object.assign(async (db: PgExecutor, plans: readonly PlannedJob[]) => (await run(db, plans, [])).ids, { guarded: run });
}

function readGuarded(rows: readonly { id: string | null; parent_id?: string | null; parent_state?: JobState | null }[]): GuardedEnqueue {
  const stale = rows.some((row) => row.id === null);
  const locked = new Map<string, JobState>();
  for (const row of rows) if (row.parent_id) locked.set(row.parent_id, row.parent_state!);
  return stale ? { ok: false, ids: new Set(), locked } : { ok: true, ids: new Set(rows.map((row) => row.id!)) };
}
