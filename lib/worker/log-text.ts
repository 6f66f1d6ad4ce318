import { visibleText } from '../core/index.js';

/**
 * How much of an error the worker's log lines carry. Every form is one line with its control
 * characters escaped (see `visibleText`), so no error can split a line, forge one, or act on the
 * terminal that shows the log:
 * - `class`: the error's class only (`TypeError`), for logs that must never hold a handler's text;
 * - `message` (default): the class and the first {@link ERROR_LOG_MESSAGE_LENGTH} characters of
 *   the message. A message that quotes the payload can still put that much of it in the log;
 * - `stack`: the class, message and stack, up to {@link ERROR_LOG_STACK_LENGTH} characters.
 *
 * The job's `lastError` keeps the full text either way, for operators.
 */
export type ErrorLogDetail = 'class' | 'message' | 'stack';

export const ERROR_LOG_DETAILS: readonly ErrorLogDetail[] = ['class', 'message', 'stack'];
/** Characters of an error's message a `message` log line keeps. */
export const ERROR_LOG_MESSAGE_LENGTH = 200;
/** Characters of an error's stack a `stack` log line keeps. */
export const ERROR_LOG_STACK_LENGTH = 8_192;
/** An error class name longer than this is not a class name; it is cut. */
const NAME_LENGTH = 100;

/** What a thrown value reads as when reading it throws (a hostile getter, a Proxy, no `toString`). */
export const UNREADABLE = '(unreadable)';

/** Reads a property a handler's error may have made into a throwing getter. */
function read(value: () => unknown): string {
  try {
    return String(value());
  } catch {
    return UNREADABLE;
  }
}

/**
 * `value instanceof type`, false when asking throws: a thrown Proxy may trap `getPrototypeOf`, and
 * a thrown value must never turn its own description into a second throw.
 */
export function isInstance<T>(value: unknown, type: abstract new (...args: never[]) => T): value is T {
  try {
    return value instanceof type;
  } catch {
    return false;
  }
}

/** An error as one log line, carrying as much as `detail` allows. */
export function describeError(error: unknown, detail: ErrorLogDetail = 'message'): string {
  if (!isInstance(error, Error)) {
    if (detail === 'class') return `a thrown ${error === null ? 'null' : typeof error}`;
    return visibleText(read(() => error), { maxLength: detail === 'stack' ? ERROR_LOG_STACK_LENGTH : ERROR_LOG_MESSAGE_LENGTH });
  }
  const name = visibleText(read(() => error.name), { maxLength: NAME_LENGTH });
  if (detail === 'class') return name;
  if (detail === 'stack') {
    const stack = read(() => error.stack ?? `${error.name}: ${error.message}`);
    return visibleText(stack, { maxLength: ERROR_LOG_STACK_LENGTH });
  }
  return `${name}: ${visibleText(read(() => error.message), { maxLength: ERROR_LOG_MESSAGE_LENGTH })}`;
}

/** An error's class and message as stored text (a job's `lastError`, an observer's failure), unbounded and unescaped. */
export function errorText(error: unknown): string {
  if (isInstance(error, Error)) return `${read(() => error.name)}: ${read(() => error.message)}`;
  return read(() => error);
}

/**
 * What a failed attempt's `lastError` keeps: the stack when it reads as one (it starts with the
 * message), else {@link errorText}. Never throws, whatever was thrown.
 */
export function errorDetail(error: unknown): string {
  if (!isInstance(error, Error)) return read(() => error);
  let stack: unknown;
  try {
    stack = error.stack;
  } catch {
    stack = undefined;
  }
  return typeof stack === 'string' ? stack : errorText(error);
}
