import { Module, Scope, type DynamicModule } from '@nestjs/common';
import { DiscoveryModule, REQUEST } from '@nestjs/core';
import { checkOptions, InvalidArgumentError } from '../core/index.js';
import { AttemptContext } from '../worker/index.js';
import { JobHandlerRegistry } from './job-handler.registry.js';
import { isBatchRequest, NestJobInvoker } from './nest-job.invoker.js';
import { SchedulerMetadataAccessor } from './scheduler-metadata.accessor.js';
import { SchedulerClient } from './scheduler.client.js';
import { SchedulerExplorer } from './scheduler.explorer.js';
import { NOT_IN_ATTEMPT, NOT_IN_BATCH_CALL } from './scheduler.messages.js';
import { SCHEDULER_ASYNC_OPTIONS_TYPE, SchedulerConfigurableModule } from './scheduler.module-definition.js';
import { SCHEDULER_ASYNC_OPTION_KEYS } from './scheduler-options.check.js';
import { SchedulerOrchestrator } from './scheduler.orchestrator.js';
import { JOB_CONTEXT, JOB_ENTITY_MANAGER, SCHEDULER_STORE } from './scheduler.tokens.js';

function attemptContext(request: unknown, what: string): AttemptContext {
  // A batch call runs many jobs, each with its own context: none of them is the call's.
  if (isBatchRequest(request)) throw new InvalidArgumentError(NOT_IN_BATCH_CALL(what), what);
  if (!(request instanceof AttemptContext)) throw new InvalidArgumentError(NOT_IN_ATTEMPT(what), what);
  return request;
}

/**
 * The durable scheduler as a NestJS module. `forRoot(options)` or `forRootAsync({ useFactory |
 * useClass | useExisting })` builds the store on the application's TypeORM DataSource, discovers
 * `@Job` handlers, and runs a worker from bootstrap to shutdown.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    JobHandlerRegistry,
    SchedulerMetadataAccessor,
    SchedulerExplorer,
    NestJobInvoker,
    SchedulerOrchestrator,
    SchedulerClient,
    {
      provide: JOB_CONTEXT,
      scope: Scope.REQUEST,
      inject: [REQUEST],
      useFactory: (request: unknown) => attemptContext(request, 'JOB_CONTEXT'),
    },
    {
      provide: JOB_ENTITY_MANAGER,
      scope: Scope.REQUEST,
      inject: [REQUEST],
      useFactory: (request: unknown) => attemptContext(request, 'JOB_ENTITY_MANAGER').entityManager(),
    },
  ],
  exports: [SchedulerClient, SchedulerOrchestrator, SCHEDULER_STORE, JOB_CONTEXT, JOB_ENTITY_MANAGER],
})
export class SchedulerModule extends SchedulerConfigurableModule {
  /**
   * `forRoot`, with the options made by a factory, a class or an existing provider. The keys of
   * this object are checked at once (`useFactroy` would otherwise leave the module without
   * options); the options it makes are checked at boot, as `forRoot`'s are.
   */
  static override forRootAsync(options: typeof SCHEDULER_ASYNC_OPTIONS_TYPE): DynamicModule {
    checkOptions(options ?? null, SCHEDULER_ASYNC_OPTION_KEYS, { what: 'SchedulerModule.forRootAsync', argument: 'SchedulerModule.forRootAsync options' });
    return super.forRootAsync(options);
  }
}
