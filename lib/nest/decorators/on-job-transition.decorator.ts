import { SetMetadata } from '@nestjs/common';
import type { JobState } from '../../core/index.js';
import type { JobName } from '../interfaces/job-registry.interface.js';
import { OBSERVER_METADATA } from '../scheduler.tokens.js';

/** Options of `@OnJobTransition`. */
export interface OnJobTransitionOptions {
  /** The states to hear about, e.g. `['dead_lettered']`. */
  readonly to: readonly JobState[];
  /** Only these wire names; every job when absent. */
  readonly job?: JobName | readonly JobName[];
  /**
   * Names the observer's place in the log. Default `ClassName.methodName`; set it to keep the
   * place when you rename the class or method.
   */
  readonly id?: string;
}

/**
 * Marks a provider method as a transition observer. It is called with a {@link TransitionEvent}
 * for every matching state change, at least once, after the change committed. Dedupe on
 * `event.eventId` if acting twice would hurt. Throwing redelivers the event after a backoff.
 *
 * ```ts
 * @Injectable()
 * export class DeadLetterAlerts {
 *   @OnJobTransition({ to: ['dead_lettered'] })
 *   notify(event: TransitionEvent) { ... }
 * }
 * ```
 */
export function OnJobTransition(options: OnJobTransitionOptions): MethodDecorator {
  return (target, key, descriptor) => {
    // Missing options still mark the method, so the boot refuses it instead of silently skipping it.
    SetMetadata(OBSERVER_METADATA, options ?? {})(target, key, descriptor);
  };
}
