import { Injectable, SetMetadata, type Type } from '@nestjs/common';
import { InvalidArgumentError } from '../../core/index.js';
import type { BatchJobHandler, JobHandler } from '../interfaces/job-handler.interface.js';
import type { BatchJobHandlerOptions, BatchJobOptions, JobHandlerOptions, JobOptions } from '../interfaces/job-options.interface.js';
import type { JobName, JobPayload } from '../interfaces/job-registry.interface.js';
import { DEFINITION_KEYS, isDefinedJob, type DefinedJob } from '../job-definition.js';
import { JOB_METADATA } from '../scheduler.tokens.js';

/**
 * Marks a provider class as the handler of one wire name. The class needs a
 * `handle(payload, context)` method; with a {@link JobRegistry} entry for the name, the payload
 * type is checked at compile time. Register the class as a provider in any module.
 *
 * ```ts
 * @Job('orders.confirm')
 * export class ConfirmOrder implements JobHandler<{ orderId: string }> {
 *   async handle(payload: { orderId: string }, ctx: JobContext) { ... }
 * }
 * ```
 *
 * Given a {@link defineJob} definition, the handler takes its name, payload type, queue,
 * attempts, retry and limits, so it agrees with every producer that enqueues by the same
 * definition; `options` adds what only a handler has (`timeoutMs`, `transaction`, `validate`,
 * `schedule`, `batch`): `@Job(ConfirmOrder, { timeoutMs: 30_000 })`.
 *
 * With `batch: { size, waitMs? }`, the class is a {@link BatchJobHandler} instead: its
 * `handle(jobs, context)` takes up to `size` due jobs of the name in one call.
 *
 * ```ts
 * @Job({ name: 'search.index', batch: { size: 100, waitMs: 200 } })
 * export class IndexDocuments implements BatchJobHandler<{ docId: string }> {
 *   async handle(jobs: readonly BatchJob<{ docId: string }>[]) { ... }
 * }
 * ```
 */
export function Job<TPayload>(definition: DefinedJob<TPayload>, options: BatchJobHandlerOptions<TPayload>): <T extends Type<BatchJobHandler<TPayload>>>(target: T) => void;
export function Job<TPayload>(definition: DefinedJob<TPayload>, options?: JobHandlerOptions<TPayload>): <T extends Type<JobHandler<TPayload>>>(target: T) => void;
export function Job<N extends JobName>(options: BatchJobOptions<N>): <T extends Type<BatchJobHandler<JobPayload<N>>>>(target: T) => void;
export function Job<N extends JobName>(nameOrOptions: N | JobOptions<N>): <T extends Type<JobHandler<JobPayload<N>>>>(target: T) => void;
export function Job(nameOrOptions: string | JobOptions<string> | DefinedJob, handlerOptions?: JobHandlerOptions<unknown>) {
  return (target: Type<unknown>): void => {
    SetMetadata(JOB_METADATA, jobOptions(target, nameOrOptions, handlerOptions))(target);
    Injectable()(target);
  };
}

function jobOptions(target: Type<unknown>, nameOrOptions: string | JobOptions<string> | DefinedJob, handlerOptions: JobHandlerOptions<unknown> | undefined): JobOptions<string> {
  if (typeof nameOrOptions === 'string') return { name: nameOrOptions };
  if (!isDefinedJob(nameOrOptions)) return nameOrOptions as JobOptions<string>;
  if (handlerOptions === undefined) return { ...nameOrOptions };
  if (handlerOptions === null || typeof handlerOptions !== 'object') {
    throw new InvalidArgumentError(`${target.name} (@Job '${nameOrOptions.name}') passes handler options that are not an object.`, 'options');
  }
  // The definition is what producers use too: a handler that changed it would disagree with them.
  const shared = Object.keys(handlerOptions).find((key) => DEFINITION_KEYS.includes(key));
  if (shared) {
    throw new InvalidArgumentError(`${target.name} (@Job '${nameOrOptions.name}') sets ${shared} beside its definition; set it in defineJob, so producers use it too.`, shared);
  }
  return { ...nameOrOptions, ...handlerOptions };
}
