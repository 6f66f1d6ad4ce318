import { assertNonEmptyString, encodeJson, InvalidArgumentError, showValue, isJobState, JOB_STATES, type JobState } from '../../core/index.js';
import type { AuditAppendParams, OperatorOptions } from '../job-store.js';
import type { AuditEntry } from '../schedules/index.js';

/** The actor recorded in the audit log: the caller's, or `api`. */
export function actorOf(options: OperatorOptions | undefined): string {
  return options?.actor === undefined ? 'api' : assertNonEmptyString(options.actor, 'actor', 200);
}

/** A cancel's `onlyFrom`: absent, or a non-empty list of job states; anything else is refused in one sentence. */
export function checkOnlyFrom(value: unknown): readonly JobState[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.length === 0 || !value.every(isJobState)) {
    throw new InvalidArgumentError(`onlyFrom must be a non-empty list of job states (${JOB_STATES.join(', ')}).`, 'onlyFrom');
  }
  return [...value];
}

/** Of an audit entry's detail, the most its JSON may weigh (MySQL keeps it in a TEXT column). */
export const MAX_AUDIT_DETAIL_BYTES = 60_000;

/** An audit action: `area.verb`, lower case, as the store's own actions are named; at most 63 characters. */
export function checkAuditAction(value: unknown): string {
  if (typeof value !== 'string' || !/^[a-z][a-z_]{0,30}\.[a-z][a-z_]{0,30}$/.test(value)) {
    throw new InvalidArgumentError(`action must name what was done as area.verb in lower case, such as verify.run, got ${showValue(value)}.`, 'action');
  }
  return value;
}

const NOT_AN_OBJECT = (value: unknown) => new InvalidArgumentError(`detail must be a JSON object, got ${showValue(value)}.`, 'detail');

/**
 * An entry for the audit log, checked whole before anything is written: its action, target and
 * detail, a plain object encoded as payloads are (no NUL or lone surrogate, which PostgreSQL's
 * jsonb refuses, no cycles or BigInt), and stored as it reads back.
 */
export function checkAuditEntry(params: AuditAppendParams, actor: string): AuditEntry {
  const action = checkAuditAction(params.action);
  const target = assertNonEmptyString(params.target, 'target', 200);
  if (params.detail === undefined) return { actor, action, target };
  const detail: unknown = params.detail;
  if (detail === null || typeof detail !== 'object' || Array.isArray(detail) || ![Object.prototype, null].includes(Object.getPrototypeOf(detail))) throw NOT_AN_OBJECT(detail);
  const decoded: unknown = JSON.parse(encodeJson(detail, { argument: 'detail', maxBytes: MAX_AUDIT_DETAIL_BYTES, maxDepth: 32 }));
  // A toJSON on the object itself may have made it something else.
  if (decoded === null || typeof decoded !== 'object' || Array.isArray(decoded)) throw NOT_AN_OBJECT(decoded);
  return { actor, action, target, detail: decoded as Record<string, unknown> };
}
