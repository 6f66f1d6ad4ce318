import { SchedulerError, type SchedulerErrorCode } from './scheduler.error.js';

/** A caller passed a value the library refuses. Raised before anything is written. */
export class InvalidArgumentError extends SchedulerError {
  constructor(
    message: string,
    /** The argument that was refused, e.g. `payload` or `maxAttempts`. */
    readonly argument: string,
    code: SchedulerErrorCode = 'INVALID_ARGUMENT',
  ) {
    super(code, message);
  }
}

/** A payload or output whose JSON text is larger than the configured limit. */
export class PayloadTooLargeError extends InvalidArgumentError {
  constructor(
    message: string,
    argument: string,
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(message, argument, 'PAYLOAD_TOO_LARGE');
  }
}

/** A schema, table or prefix name that is not a safe SQL identifier. */
export class InvalidIdentifierError extends InvalidArgumentError {
  constructor(message: string, argument: string) {
    super(message, argument, 'INVALID_IDENTIFIER');
  }
}
