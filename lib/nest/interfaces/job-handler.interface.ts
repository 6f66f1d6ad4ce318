import type { JobContext } from '../../worker/index.js';

/**
 * A class decorated with `@Job` implements this. `handle` runs one attempt: return (or resolve) to
 * succeed, throw to fail and retry. It may run more than once for the same job, so make it
 * idempotent, for example by deduplicating on `context.occurrenceId`.
 */
export interface JobHandler<TPayload = unknown> {
  // A property, not a method, so payload types are checked strictly (contravariantly).
  readonly handle: (payload: TPayload, context: JobContext<TPayload>) => Promise<unknown> | unknown;
}
