import { InvalidArgumentError } from '../../core/index.js';
import type { NewJob } from '../enqueue-input.js';
import type { EnqueueResult } from '../job-store.js';
import { debounceFallbacks, debounceKeyTakenError, enqueueResults, planUnique, replayGuarded, slotOf, uniqueKeyTakenError } from '../unique/unique-plan.js';
import type { PgExecutor } from './pg-executor.js';
import type { uniqueEnqueueQueries } from './queries/unique-enqueue.query.js';
import type { uniqueReplayHolderQuery } from './queries/unique-replay-holder.query.js';

/**
 * Enqueues a batch that carries unique keys or windows, inside the transaction `db` is in (the
 * store's own, or the host's): lock the keys, find their holders and the ids already stored,
 * decide, then insert and rewrite. The locks are held until that transaction ends, so a concurrent
 * enqueue of one key waits for this one's commit or rollback and then finds its job, or finds the
 * key free. A claim takes no such lock: a debounce holder it took after the look-up is not
 * rewritten, and the debounced job is inserted after all, so its payload still runs.
 */
export async function enqueueUniquePostgres(
  db: PgExecutor,
  jobs: readonly NewJob[],
  sql: ReturnType<typeof uniqueEnqueueQueries>,
  insertJobs: (db: PgExecutor, jobs: readonly NewJob[]) => Promise<Set<string>>,
): Promise<EnqueueResult[]> {
  const keyed = jobs.filter((job) => slotOf(job) !== null);
  const isolation = await sql.lock(db, keyed);
  // Only a throttle lacks an index to fail on: a window opened after this snapshot would be missed.
  if (isolation === 'repeatable read' && keyed.some((job) => job.window?.kind === 'throttle')) throw throttleIsolationError();
  const { holders, existing } = await sql.lookup(db, keyed, jobs.filter((job) => job.freshId !== true).map((job) => job.id));
  const plan = planUnique(existing.size === 0 ? jobs : jobs.filter((job) => !existing.has(job.id)), holders);
  const created = plan.insert.length > 0 ? await insertJobs(db, plan.insert) : new Set<string>();
  const replaced = plan.replace.length > 0 ? await sql.replace(db, plan.replace) : new Set<string>();
  const fallbacks = debounceFallbacks(plan, replaced);
  if (fallbacks.length > 0) for (const id of await insertJobs(db, fallbacks)) created.add(id);
  return enqueueResults(jobs, created, plan, replaced);
}

/**
 * A throttle enqueue in a host transaction at REPEATABLE READ: its snapshot cannot see a window
 * another transaction opened after it began, and no index backs a window up, so it is refused.
 */
function throttleIsolationError(): InvalidArgumentError {
  return new InvalidArgumentError(
    'A throttle enqueue needs its transaction at READ COMMITTED or SERIALIZABLE on PostgreSQL: at REPEATABLE READ it cannot see a window another transaction opened since it began; nothing was written.',
    'manager',
  );
}

/**
 * Refuses a replay that would give a job back a key another unfinished job holds, or make a
 * debounced job take its key's enqueues while another job that has not started takes them.
 */
export async function guardReplayPostgres(db: PgExecutor, jobId: string, replayHolder: ReturnType<typeof uniqueReplayHolderQuery>): Promise<void> {
  const taken = await replayHolder(db, jobId);
  if (taken && replayGuarded(taken.job.state)) {
    throw (taken.debounce ? debounceKeyTakenError : uniqueKeyTakenError)(taken.job, taken.key, taken.holderId);
  }
}
