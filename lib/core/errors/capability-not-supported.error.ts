import { SchedulerError } from './scheduler.error.js';

/** The store was asked for an optional feature it does not declare. */
export class CapabilityNotSupportedError extends SchedulerError {
  constructor(
    readonly capability: string,
    message: string,
  ) {
    super('CAPABILITY_NOT_SUPPORTED', message);
  }
}
