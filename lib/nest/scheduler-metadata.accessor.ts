import { Injectable, type Type } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { JobOptions } from './interfaces/job-options.interface.js';
import type { OnJobTransitionOptions } from './decorators/on-job-transition.decorator.js';
import { JOB_METADATA, OBSERVER_METADATA } from './scheduler.tokens.js';

/** Reads `@Job` metadata from provider classes. */
@Injectable()
export class SchedulerMetadataAccessor {
  constructor(private readonly reflector: Reflector) {}

  jobOptions(target: Type<unknown> | Function | undefined): JobOptions<string> | undefined {
    if (!target || typeof target !== 'function') return undefined;
    return this.reflector.get<JobOptions<string> | undefined>(JOB_METADATA, target);
  }

  observerOptions(method: Function | undefined): OnJobTransitionOptions | undefined {
    if (typeof method !== 'function') return undefined;
    return this.reflector.get<OnJobTransitionOptions | undefined>(OBSERVER_METADATA, method);
  }
}
