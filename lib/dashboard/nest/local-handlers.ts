import type { JobHandlerRegistry, RegisteredJob } from '../../nest/job-handler.registry.js';
import type { SchedulerOrchestrator } from '../../nest/scheduler.orchestrator.js';
import type { LocalHandlers, NodeHandler } from '../pages/node-handlers.view.js';

/** A registered `@Job` handler as the Workers page lists it: how this node runs its wire name. */
export function nodeHandlerOf(job: RegisteredJob): NodeHandler {
  const { batch, timeoutMs, transaction } = job.definition;
  return { name: job.name, queue: job.queue, batch: batch ? { size: batch.size, waitMs: batch.waitMs } : null, timeoutMs: timeoutMs ?? null, transaction };
}

/**
 * The handlers of the app the dashboard is mounted in, from its registry, under its node's id; or
 * `none` when the app runs no worker, since its registered handlers then run nowhere here.
 */
export function localHandlers(registry: Pick<JobHandlerRegistry, 'all'>, orchestrator: Pick<SchedulerOrchestrator, 'runsWorker' | 'node'>): LocalHandlers {
  if (!orchestrator.runsWorker) return { runs: 'none' };
  return { runs: 'worker', workerId: orchestrator.node.workerId, handlers: registry.all().map(nodeHandlerOf) };
}
