import { Injectable, SetMetadata, type Type } from '@nestjs/common';
import type { JobHandler } from '../interfaces/job-handler.interface.js';
import type { JobOptions } from '../interfaces/job-options.interface.js';
import type { JobName, JobPayload } from '../interfaces/job-registry.interface.js';
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
 */
export function Job<N extends JobName>(nameOrOptions: N | JobOptions<N>) {
  const options: JobOptions<N> = typeof nameOrOptions === 'string' ? { name: nameOrOptions } : nameOrOptions;
  return <T extends Type<JobHandler<JobPayload<N>>>>(target: T): void => {
    SetMetadata(JOB_METADATA, options)(target);
    Injectable()(target);
  };
}
