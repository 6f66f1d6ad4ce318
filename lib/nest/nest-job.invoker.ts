import { Injectable } from '@nestjs/common';
import { ContextIdFactory, ModuleRef } from '@nestjs/core';
import type { JobRecord } from '../core/index.js';
import type { AttemptContext, JobDefinition, JobInvoker } from '../worker/index.js';
import type { JobHandler } from './interfaces/job-handler.interface.js';
import { JobHandlerRegistry } from './job-handler.registry.js';

/**
 * Calls `@Job` handlers with a DI scope per attempt: a fresh context id whose REQUEST is the
 * attempt's JobContext, so request-scoped providers (the attempt's EntityManager among them) are
 * new for every attempt. Handlers whose dependency tree is all singletons are called directly.
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
    const registered = this.registry.get(job.name)!;
    let handler: JobHandler;
    if (registered.wrapper.isDependencyTreeStatic()) {
      handler = registered.wrapper.instance as JobHandler;
    } else {
      const contextId = ContextIdFactory.create();
      this.moduleRef.registerRequestByContextId(context, contextId);
      handler = await this.moduleRef.resolve<JobHandler>(registered.metatype, contextId, { strict: false });
    }
    await handler.handle(job.payload, context);
  }
}
