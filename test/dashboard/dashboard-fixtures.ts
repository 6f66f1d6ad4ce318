import { expect } from '@jest/globals';
import type { JobStore } from '../../lib/store/index.js';

/** Enqueues a job on its own queue, claims it and fails it on its only attempt. */
export async function deadLetter(store: JobStore, name: string, error: string, payload: unknown = { card: '4242' }): Promise<string> {
  const queue = 'failing';
  const { id } = await store.jobEnqueue({ job: { name, payload, queue, maxAttempts: 1 } });
  const claimed = await store.jobClaim({ workerId: 'worker-1', limit: 1, queues: [queue], leaseMs: 30_000 });
  expect(claimed.map((job) => job.id)).toEqual([id]);
  await store.jobCompleteMany({ workerId: 'worker-1', outcomes: [{ jobId: id, attempt: 1, kind: 'failed', error, retryDelayMs: 0 }] });
  return id;
}

/** The job ids linked from a page, in page order. */
export function linkedJobIds(text: string): string[] {
  return [...text.matchAll(/href="[^"]*\/jobs\/([0-9a-f-]{36})"/g)].map((match) => match[1]!);
}

/**
 * Enqueues a job into sequence `key` on a queue of its own, claims it and fails it for good (or
 * quarantines it), so the next job of the sequence waits behind it; returns its id.
 */
export async function failInSequence(store: JobStore, key: string, error = 'ledger refused', kind: 'dead_lettered' | 'quarantined' = 'dead_lettered'): Promise<string> {
  const queue = 'sequence-heads';
  const { id } = await store.jobEnqueue({ job: { name: 'acct.open', payload: {}, queue, maxAttempts: 1, sequence: { key } } });
  const claimed = await store.jobClaim({ workerId: 'worker-1', limit: 1, queues: [queue], leaseMs: 30_000 });
  expect(claimed.map((job) => job.id)).toEqual([id]);
  const outcome = kind === 'dead_lettered' ? { kind, error } : { kind, reason: error };
  await store.jobCompleteMany({ workerId: 'worker-1', outcomes: [{ jobId: id, attempt: 1, ...outcome }] });
  return id;
}

/** The callback options of a batch, on their own queue: which ones {@link enqueueBatch} adds. */
const CALLBACKS = {
  success: { onSuccess: { name: 'batch.succeeded', payload: {}, queue: 'batch-callbacks' } },
  complete: { onComplete: { name: 'batch.completed', payload: {}, queue: 'batch-callbacks' } },
  failure: { onFailure: { name: 'batch.failed', payload: {}, queue: 'batch-callbacks' } },
} as const;

/** Enqueues a batch of `size` jobs on `queue`, with the callbacks named (all three by default). */
export async function enqueueBatch(store: JobStore, size: number, callbacks: readonly ('success' | 'complete' | 'failure')[] = ['success', 'complete', 'failure'], queue = 'batch') {
  const jobs = Array.from({ length: size }, (_, i) => ({ name: 'batch.item', payload: { i }, queue, maxAttempts: 1 }));
  return store.jobEnqueueBatch({ jobs, ...Object.assign({}, ...callbacks.map((kind) => CALLBACKS[kind])) });
}

/**
 * Claims every due job of `queue` (they run), then ends each job named as given, on its current
 * attempt; the other claimed jobs stay running.
 */
export async function endJobs(store: JobStore, queue: string, outcomes: readonly (readonly [string, 'succeeded' | 'dead_lettered'])[]): Promise<void> {
  await store.jobClaim({ workerId: 'worker-1', limit: 1_000, queues: [queue], leaseMs: 600_000 });
  for (const [jobId, kind] of outcomes) {
    const { attempt } = (await store.jobGet({ jobId }))!;
    const outcome = kind === 'succeeded' ? { kind } : { kind, error: 'item refused' };
    await store.jobCompleteMany({ workerId: 'worker-1', outcomes: [{ jobId, attempt, ...outcome }] });
  }
}
