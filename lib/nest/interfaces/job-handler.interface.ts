import type { BatchContext, BatchJob, JobContext } from '../../worker/index.js';

/**
 * A class decorated with `@Job` implements this. `handle` runs one attempt: return (or resolve) to
 * succeed, throw to fail and retry. It may run more than once for the same job, so make it
 * idempotent, for example by deduplicating on `context.occurrenceId`.
 */
export interface JobHandler<TPayload = unknown> {
  // A property, not a method, so payload types are checked strictly (contravariantly).
  readonly handle: (payload: TPayload, context: JobContext<TPayload>) => Promise<unknown> | unknown;
}

/**
 * A class decorated with `@Job({ name, batch: { size, waitMs? } })` implements this instead of
 * {@link JobHandler}: `handle` runs once for up to `size` due jobs of its name. Each job keeps its
 * own outcome: return to succeed every job not failed, `jobs[i].fail(error)` to fail one alone
 * (retried on its own policy), throw to fail all that were not. Each job may run again in a later
 * call, so make the handler idempotent per job (`job.occurrenceId`).
 */
export interface BatchJobHandler<TPayload = unknown> {
  // A property, not a method, so payload types are checked strictly (contravariantly).
  readonly handle: (jobs: readonly BatchJob<TPayload>[], context: BatchContext) => Promise<unknown> | unknown;
}
