import { expect } from '@jest/globals';
import { InvalidArgumentError, SchedulerError, type JobRecord } from '../../../core/index.js';
import type { EnqueueInput, JobStore } from '../../../store/index.js';

export const LEASE_MS = 30_000;

export async function enqueue(store: JobStore, input: Partial<EnqueueInput> = {}): Promise<string> {
  const { id } = await store.jobEnqueue({ job: { name: 'test.job', payload: { n: 1 }, ...input } });
  return id;
}

/** Claims exactly one job and returns it, failing the test otherwise. */
export async function claimOne(store: JobStore, workerId = 'worker-a', queues: string[] = ['default']): Promise<JobRecord> {
  const jobs = await store.jobClaim({ workerId, limit: 1, queues, leaseMs: LEASE_MS });
  expect(jobs).toHaveLength(1);
  return jobs[0]!;
}

export async function claimNone(store: JobStore, workerId = 'worker-a', queues: string[] = ['default']): Promise<void> {
  expect(await store.jobClaim({ workerId, limit: 10, queues, leaseMs: LEASE_MS })).toEqual([]);
}

export async function mustGet(store: JobStore, id: string): Promise<JobRecord> {
  const job = await store.jobGet({ jobId: id });
  expect(job).not.toBeNull();
  return job!;
}

/** Expects `run` to be refused with a typed scheduler error of one sentence matching `pattern`. */
export async function expectRefused(run: () => Promise<unknown>, pattern: RegExp, type: new (...args: never[]) => Error = InvalidArgumentError) {
  const error = await run().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(type);
  expect(error).toBeInstanceOf(SchedulerError);
  expect((error as Error).message).toMatch(pattern);
  // One sentence: ends with a full stop and has no line breaks.
  expect((error as Error).message).toMatch(/^[^\n]+\.$/);
}

/** Claims up to `limit` due jobs of `queues` for `workerId`. */
export const takeJobs = async (store: JobStore, limit: number, queues = ['default'], workerId = 'w') => store.jobClaim({ workerId, limit, queues, leaseMs: LEASE_MS });

/** Records `job`'s success under the lease it was claimed with. */
export const succeed = (store: JobStore, job: JobRecord) =>
  store.jobCompleteMany({ workerId: job.workerId!, outcomes: [{ jobId: job.id, attempt: job.attempt, kind: 'succeeded' }] });

/** Enqueues `count` jobs in one call per 500, in order (enqueue order is claim order among equals), and returns their ids. */
export async function enqueueRun(store: JobStore, count: number, input: Partial<EnqueueInput> = {}): Promise<string[]> {
  const jobs = Array.from({ length: count }, (_, i) => ({ name: 'test.job', payload: { i }, ...input }));
  const ids: string[] = [];
  // In slices, so a large run stays within every store's statement limits.
  for (let at = 0; at < jobs.length; at += 500) ids.push(...(await store.jobEnqueueMany({ jobs: jobs.slice(at, at + 500) })).map((r) => r.id));
  return ids;
}
