import { Injectable, type Type } from '@nestjs/common';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';
import { DEFAULT_MAX_ATTEMPTS, type Rate, type ScheduleInput } from '../store/index.js';
import type { JobDefinition, TransitionObserver } from '../worker/index.js';
import type { JobOptions } from './interfaces/job-options.interface.js';
import type { JobSequenceOption } from './job-sequence.js';

/** One discovered `@Job` handler. */
export interface RegisteredJob {
  readonly name: string;
  readonly metatype: Type<unknown>;
  readonly wrapper: InstanceWrapper;
  readonly options: JobOptions<string>;
  readonly queue: string;
  readonly maxAttempts: number;
  /** The priority of its jobs when an enqueue sets none; absent for the default, 0. */
  readonly priority?: number;
  readonly definition: JobDefinition;
  /** The schedule this handler declares, ready to upsert at boot. */
  readonly schedule?: ScheduleInput;
  /** Computes each job's fair group from its payload (docs/groups.md). */
  readonly group?: (payload: unknown) => string;
  /** Computes each job's concurrency key from its payload (its group's, or the wire name, when only a limit or a rate is set). */
  readonly concurrencyKey?: (payload: unknown) => string;
  readonly concurrencyLimit?: number;
  /** The rate declared for each job's concurrency key at enqueue. */
  readonly rateLimit?: Rate;
  /** The sequence each job joins, its key computed from the payload (docs/sequences.md). */
  readonly sequence?: JobSequenceOption;
}

/** What an enqueue takes from a handler or a definition when the call does not say. */
export type JobDefaults = Pick<RegisteredJob, 'name' | 'queue' | 'maxAttempts' | 'priority' | 'group' | 'concurrencyKey' | 'concurrencyLimit' | 'rateLimit' | 'sequence'>;

/** The handlers and observers this application registered. Filled by the explorer at module init. */
@Injectable()
export class JobHandlerRegistry {
  private readonly jobs = new Map<string, RegisteredJob>();
  /** Names known from the module's `jobs` definitions, with no handler on this node. */
  readonly defined = new Map<string, JobDefaults>();
  /** Attempts for jobs whose handler or definition sets none: the module's `maxAttempts`, set at module init. */
  defaultMaxAttempts = DEFAULT_MAX_ATTEMPTS;
  /** `@OnJobTransition` methods, bound to their provider instances. */
  readonly observers: TransitionObserver[] = [];

  add(job: RegisteredJob): void {
    this.jobs.set(job.name, job);
  }

  get(name: string): RegisteredJob | undefined {
    return this.jobs.get(name);
  }

  /** The enqueue defaults of a name: its handler's, or else its listed definition's. */
  defaults(name: string): JobDefaults | undefined {
    return this.jobs.get(name) ?? this.defined.get(name);
  }

  names(): string[] {
    return [...this.jobs.keys()].sort();
  }

  all(): RegisteredJob[] {
    return [...this.jobs.values()];
  }
}
