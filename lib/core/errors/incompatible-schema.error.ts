import { SchedulerError } from './scheduler.error.js';

/**
 * The scheduler's tables were upgraded by a newer version of this package that older nodes cannot
 * run against (it declared so when it installed its SQL). Upgrade the node that raised it.
 */
export class IncompatibleSchemaError extends SchedulerError {
  constructor(
    /** The install version this node's code carries. */
    readonly nodeVersion: number,
    /** The install version recorded in the database. */
    readonly databaseVersion: number,
    message: string,
  ) {
    super('INCOMPATIBLE_SCHEMA', message);
  }
}
