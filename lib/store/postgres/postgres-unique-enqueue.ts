import type { NewJob } from '../enqueue-input.js';
import type { EnqueueResult } from '../job-store.js';
import { enqueueResults, planUnique, uniqueKeyTakenError } from '../unique/unique-plan.js';
import type { PgExecutor } from './pg-executor.js';
import type { uniqueEnqueueQueries } from './queries/unique-enqueue.query.js';
import type { uniqueReplayHolderQuery } from './queries/unique-replay-holder.query.js';

/**
 * Enqueues a batch that carries unique keys, inside the transaction `db` is in (the store's own, or
 * the host's): lock the keys, find their holders and the ids already stored, decide, then insert
 * and rewrite. The locks are held until that transaction ends, so a concurrent enqueue of one key
 * waits for this one's commit or rollback and then finds its job, or finds the key free.
 */
export async function enqueueUniquePostgres(
  db: PgExecutor,
  jobs: readonly NewJob[],
  sql: ReturnType<typeof uniqueEnqueueQueries>,
  insertJobs: (db: PgExecutor, jobs: readonly NewJob[]) => Promise<Set<string>>,
): Promise<EnqueueResult[]> {
  const keyed = jobs.filter((job) => job.uniqueKey != null);
  await sql.lock(db, keyed);
  const { holders, existing } = await sql.lookup(db, keyed, jobs.filter((job) => job.freshId !== true).map((job) => job.id));
  const plan = planUnique(existing.size === 0 ? jobs : jobs.filter((job) => !existing.has(job.id)), holders);
  const created = plan.insert.length > 0 ? await insertJobs(db, plan.insert) : new Set<string>();
  const replaced = plan.replace.length > 0 ? await sql.replace(db, plan.replace) : new Set<string>();
  return enqueueResults(jobs, created, plan, replaced);
}

/** Refuses a replay that would give a job back a key another unfinished job holds. */
export async function guardReplayPostgres(db: PgExecutor, jobId: string, replayHolder: ReturnType<typeof uniqueReplayHolderQuery>): Promise<void> {
  const taken = await replayHolder(db, jobId);
  if (taken && (taken.job.state === 'dead_lettered' || taken.job.state === 'quarantined')) {
    throw uniqueKeyTakenError(taken.job, taken.key, taken.holderId);
  }
}
