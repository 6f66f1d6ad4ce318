import { assertNonEmptyString } from '../../core/index.js';
import type { OperatorOptions } from '../job-store.js';

/** The actor recorded in the audit log: the caller's, or `api`. */
export function actorOf(options: OperatorOptions | undefined): string {
  return options?.actor === undefined ? 'api' : assertNonEmptyString(options.actor, 'actor', 200);
}
