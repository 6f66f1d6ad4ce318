/**
 * Compile-time checks of batch handlers. `npm test` compiles this file with `tsc -p test/types`;
 * every `@ts-expect-error` line must fail to compile, or the build fails.
 */
import { defineJob, Job, type BatchContext, type BatchJob, type BatchJobHandler, type JobContext, type JobHandler } from '../../lib/index.js';

export const IndexDoc = defineJob<{ docId: string }>({ name: 'docs.index' });

@Job(IndexDoc, { batch: { size: 100, waitMs: 200 }, timeoutMs: 30_000 })
export class IndexDocs implements BatchJobHandler<{ docId: string }> {
  async handle(jobs: readonly BatchJob<{ docId: string }>[], context: BatchContext) {
    for (const job of jobs) if (job.payload.docId === '') job.fail(new Error('empty'));
    return `${context.name}:${context.size}`;
  }
}

// By a registered name (job-registry.types.ts), with the payload of that name.
@Job({ name: 'orders.confirm', batch: { size: 10 }, transaction: false })
export class ConfirmOrders implements BatchJobHandler<{ orderId: string }> {
  async handle(jobs: readonly BatchJob<{ orderId: string }>[]) {
    return jobs.map((job) => job.payload.orderId);
  }
}

// @ts-expect-error a batch handler has no attempt transaction
@Job(IndexDoc, { batch: { size: 10 }, transaction: true })
export class TransactionalBatch implements BatchJobHandler<{ docId: string }> {
  async handle(jobs: readonly BatchJob<{ docId: string }>[]) {
    return jobs.length;
  }
}

// @ts-expect-error a handler of one job at a time cannot take batch
@Job(IndexDoc, { batch: { size: 10 } })
export class OneAtATime implements JobHandler<{ docId: string }> {
  async handle(payload: { docId: string }, ctx: JobContext) {
    return `${payload.docId}:${ctx.attempt}`;
  }
}

// @ts-expect-error a batch handler needs batch in its @Job
@Job(IndexDoc)
export class BatchWithoutOption {
  async handle(jobs: readonly BatchJob<{ docId: string }>[]) {
    return jobs.length;
  }
}

// @ts-expect-error the jobs' payload type follows the definition
@Job(IndexDoc, { batch: { size: 10 } })
export class WrongBatchPayload {
  async handle(jobs: readonly BatchJob<{ url: string }>[]) {
    return jobs.length;
  }
}

// @ts-expect-error size is a number
@Job(IndexDoc, { batch: { size: '10' } })
export class TextSize implements BatchJobHandler<{ docId: string }> {
  async handle() {}
}

// @ts-expect-error batch options have size and waitMs only
@Job(IndexDoc, { batch: { size: 10, wait: 5 } })
export class UnknownBatchKey implements BatchJobHandler<{ docId: string }> {
  async handle() {}
}
