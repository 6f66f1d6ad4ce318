import { isDeepStrictEqual } from 'node:util';
import { assertMaxAttempts, assertWireName, InvalidArgumentError, showValue, type SchedulerLimits } from '../core/index.js';
import { DEFAULT_QUEUE } from '../store/index.js';
import type { SchedulerModuleOptions } from './interfaces/scheduler-module-options.interface.js';
import { isDefinedJob, type DefinedJob } from './job-definition.js';
import type { JobDefaults, JobHandlerRegistry } from './job-handler.registry.js';
import type { JobSequenceOption } from './job-sequence.js';

/** The enqueue defaults a definition gives, over the module's default attempts. */
export function definitionDefaults(definition: DefinedJob, defaultMaxAttempts: number): JobDefaults {
  const { name, queue = DEFAULT_QUEUE, maxAttempts = defaultMaxAttempts, priority, group, concurrencyKey, concurrencyLimit, rateLimit, sequence } = definition;
  const grouped = group as ((payload: unknown) => string) | undefined;
  const key = concurrencyKey as ((payload: unknown) => string) | undefined;
  const base = {
    name,
    queue,
    maxAttempts,
    ...(priority === undefined ? {} : { priority }),
    ...(grouped === undefined ? {} : { group: grouped }),
    ...(sequence === undefined ? {} : { sequence: sequence as JobSequenceOption }),
  };
  if (concurrencyLimit === undefined && rateLimit === undefined) return key ? { ...base, concurrencyKey: key } : base;
  // As for @Job: a limit without a key governs each group, or the job itself, keyed by its wire name.
  return { ...base, concurrencyKey: key ?? grouped ?? (() => name), ...(concurrencyLimit === undefined ? {} : { concurrencyLimit }), ...(rateLimit === undefined ? {} : { rateLimit }) };
}

/** Checks the `worker` and `jobs` options before anything is written. */
export function checkProducerOptions(options: SchedulerModuleOptions): void {
  if (options.worker !== undefined && typeof options.worker !== 'boolean') {
    throw new InvalidArgumentError(`worker must be true or false, got ${showValue(options.worker)}.`, 'worker');
  }
  if (options.worker === false && options.autoStart === true) {
    throw new InvalidArgumentError('autoStart is true but worker is false, so there is no worker to start; leave autoStart unset on a producer-only node.', 'autoStart');
  }
  const jobs: unknown = options.jobs;
  if (jobs === undefined) return;
  if (!Array.isArray(jobs)) throw new InvalidArgumentError(`jobs must be an array of defineJob definitions, got ${showValue(jobs)}.`, 'jobs');
  const names = new Map<string, DefinedJob>();
  jobs.forEach((definition: unknown, i) => {
    if (!isDefinedJob(definition)) throw new InvalidArgumentError(`jobs[${i}] is not a definition made by defineJob.`, `jobs[${i}]`);
    const other = names.get(definition.name);
    if (other && other !== definition) {
      throw new InvalidArgumentError(`jobs lists two different definitions named "${definition.name}"; each wire name needs exactly one.`, `jobs[${i}]`);
    }
    names.set(definition.name, definition);
  });
}

/**
 * Makes the names of the module's `jobs` definitions known, for enqueues by name on a node that
 * has no handler for them. A name that also has a handler here must agree with it, or by-name
 * and by-definition enqueues would write different jobs.
 */
export function registerDefinedJobs(registry: JobHandlerRegistry, options: SchedulerModuleOptions, limits: SchedulerLimits): string[] {
  const listed: string[] = [];
  for (const definition of options.jobs ?? []) {
    const name = assertWireName(definition.name, limits.maxNameLength, `jobs definition name`);
    if (definition.maxAttempts !== undefined) assertMaxAttempts(definition.maxAttempts, limits.maxAttemptsCeiling, `maxAttempts of the job definition "${name}"`);
    const defaults = definitionDefaults(definition, registry.defaultMaxAttempts);
    const handler = registry.get(name);
    if (handler) {
      const differs = [
        handler.queue !== defaults.queue && 'queue',
        handler.maxAttempts !== defaults.maxAttempts && 'maxAttempts',
        handler.priority !== defaults.priority && 'priority',
        !isDeepStrictEqual(handler.options.retry, definition.retry) && 'retry',
        handler.options.group !== definition.group && 'group',
        handler.options.concurrencyKey !== definition.concurrencyKey && 'concurrencyKey',
        handler.options.concurrencyLimit !== definition.concurrencyLimit && 'concurrencyLimit',
        !isDeepStrictEqual(handler.options.rateLimit, definition.rateLimit) && 'rateLimit',
        handler.options.sequence?.key !== definition.sequence?.key && 'sequence',
        handler.options.sequence?.afterFailure !== definition.sequence?.afterFailure && 'sequence',
      ].find(Boolean);
      if (differs) {
        throw new InvalidArgumentError(
          `The job definition "${name}" in jobs and its handler ${handler.metatype.name} disagree on ${differs}; declare the handler with @Job(definition) so they share it.`,
          'jobs',
        );
      }
      continue;
    }
    if (!registry.defined.has(name)) listed.push(name);
    registry.defined.set(name, defaults);
  }
  return listed;
}

/** A producer-only node delivers to no observer: refuse them rather than ignore them. */
export function assertObserversHaveWorker(registry: JobHandlerRegistry, options: SchedulerModuleOptions): void {
  if (options.worker !== false || registry.observers.length === 0) return;
  throw new InvalidArgumentError(
    `${registry.observers.map((o) => o.id).join(', ')} observe${registry.observers.length === 1 ? 's' : ''} job transitions, but worker is false, so this node delivers none; register observers on a worker node.`,
    'worker',
  );
}
