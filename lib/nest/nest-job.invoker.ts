import { Injectable } from '@nestjs/common';
import { ContextIdFactory, ModuleRef } from '@nestjs/core';
import type { JobRecord } from '../core/index.js';
import type { AttemptContext, BatchContext, BatchJob, JobDefinition, JobInvoker, ResolvedBatchOptions } from '../worker/index.js';
import type { BatchJobHandler, JobHandler } from './interfaces/job-handler.interface.js';
import { JobHandlerRegistry } from './job-handler.registry.js';

/**
 * The batch calls whose BatchContext is a DI request now, so JOB_CONTEXT can tell a request-scoped
 * provider of a batch handler why it has no single job's context (see {@link isBatchRequest}).
 */
const batchRequests = new WeakSet<object>();

/** True when `request` is the BatchContext of a batch handler's call. */
export function isBatchRequest(request: unknown): boolean {
  return typeof request === 'object' && request !== null && batchRequests.has(request);
}

/**
 * Calls `@Job` handlers with a DI scope per attempt: a fresh context id whose REQUEST is the
 * attempt's JobContext, so request-scoped providers (the attempt's EntityManager among them) are
 * new for every attempt. A batch handler gets one scope per call, whose REQUEST is the call's
 * BatchContext. Handlers whose dependency tree is all singletons are called directly.
 */
@Injectable()
export class NestJobInvoker implements JobInvoker {
  constructor(
    private readonly registry: JobHandlerRegistry,
    private readonly moduleRef: ModuleRef,
  ) {}

  definition(name: string): JobDefinition | undefined {
    return this.registry.get(name)?.definition;
  }

  async invoke(job: JobRecord, context: AttemptContext): Promise<void> {
    const handler = await this.handler<JobHandler>(job.name, context);
    await handler.handle(job.payload, context);
  }

  async invokeBatch(jobs: readonly BatchJob[], context: BatchContext): Promise<void> {
    batchRequests.add(context);
    const handler = await this.handler<BatchJobHandler>(context.name, context);
    await handler.handle(jobs, context);
  }

  /** The wire names whose `@Job` sets `batch`, read by the node when it is built. */
  batchHandlers(): ReadonlyMap<string, ResolvedBatchOptions> {
    const batches = new Map<string, ResolvedBatchOptions>();
    for (const job of this.registry.all()) if (job.definition.batch) batches.set(job.name, job.definition.batch);
    return batches;
  }

  /** The handler instance for one attempt or one batch call, with `request` as its DI REQUEST. */
  private async handler<T>(name: string, request: AttemptContext | BatchContext): Promise<T> {
    const registered = this.registry.get(name)!;
    if (registered.wrapper.isDependencyTreeStatic()) return registered.wrapper.instance as T;
    const contextId = ContextIdFactory.create();
    this.moduleRef.registerRequestByContextId(request, contextId);
    return this.moduleRef.resolve<T>(registered.metatype, contextId, { strict: false });
  }
}
