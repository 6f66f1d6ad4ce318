import { isTerminalState, JobNotFoundError, transition, type JobEvent } from '../../../core/index.js';
import type { OperatorTransition } from '../../checked/operator-transition.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { fromPgRow, jobColumns, lifecycleValues, type PgJobRow } from '../postgres-row.js';

/**
 * Applies an operator event (replay, cancel) inside a transaction the caller opened: lock the row,
 * let the core lifecycle decide, write the result back. Operator actions are rare, so they reuse
 * the core function instead of repeating its rules in SQL. The row lock is `FOR NO KEY UPDATE`, as
 * the write's own, so a cancel request on a running parent does not wait for enqueues of its
 * dependants; a cancel that ends a job then takes `FOR UPDATE` before it writes, and waits for them
 * (parent-guard.sql.ts).
 */
export function operatorTransitionQuery(t: PostgresNaming) {
  const lock = `SELECT ${jobColumns('j')}, (extract(epoch from now()) * 1000)::bigint AS now_ms FROM ${t.jobs} j WHERE j.id = $1 FOR NO KEY UPDATE`;
  const write = `
    UPDATE ${t.jobs} j SET state = $2, run_at = $3, attempt = $4, worker_id = $5, leased_until = $6, cancel_requested = $7,
      last_error = $8, output = $9::jsonb, finished_at = $10, updated_at = $11,
      max_attempts = $12, snoozes = $13
    WHERE j.id = $1
    RETURNING ${jobColumns('j')}`;
  const wake = `SELECT pg_notify($1, $2)`;
  const lockToEnd = `SELECT 1 FROM ${t.jobs} WHERE id = $1 FOR UPDATE`;

  return async (db: PgExecutor, jobId: string, event: JobEvent, channel: string): Promise<OperatorTransition> => {
    const [locked] = await db.query<PgJobRow & { now_ms: string }>(lock, [jobId]);
    if (!locked) throw new JobNotFoundError(jobId);
    const before = fromPgRow(locked);
    const result = transition(before, event, Number(locked.now_ms));
    if (!result.ok || result.next === before) return { before, after: before, result };
    if (isTerminalState(result.next.state) && !isTerminalState(before.state)) await db.query(lockToEnd, [jobId]);
    const [written] = await db.query<PgJobRow>(write, [jobId, ...lifecycleValues({ ...before, ...result.next })]);
    if (result.effects.some((effect) => effect.type === 'wake')) await db.query(wake, [channel, before.queue]);
    return { before, after: fromPgRow(written!), result };
  };
}
