import { InvalidArgumentError } from '../errors/index.js';
import { canonicalUuid } from '../uuid-text.js';
import { visibleText } from '../visible-text.js';

/** Wire names: a letter or digit, then letters, digits and `_ . : - /`. */
const WIRE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:\-/]*$/;
/** Queue names: the same alphabet without `/`, at most 64 characters. */
const QUEUE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;

/** Control characters (C0 and DEL), which no name, key or label may hold: logs and terminals act on them. */
const CONTROL = /[\u0000-\u001f\u007f]/;
/** A UTF-16 surrogate without its partner: it has no UTF-8 form, so PostgreSQL cannot store it. */
const LONE_SURROGATE = /\p{Surrogate}/u;

/**
 * Instants every store can hold: the years 0000 to 9999. PostgreSQL refuses timestamps before
 * 4713 BC, and the text form of a Date leaves four digits behind after 9999.
 */
export const MIN_INSTANT_MS = -62_167_219_200_000; // 0000-01-01T00:00:00.000Z
/** The last instant every store can hold (see {@link MIN_INSTANT_MS}). */
export const MAX_INSTANT_MS = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z
/** Longest delay a job, retry or grace period may ask for: 100 years. */
export const MAX_DELAY_MS = 100 * 365 * 86_400_000;

/**
 * A value as it appears in an error message: strings quoted and escaped, so a message stays one
 * line. JSON escapes quotes and C0 controls; {@link visibleText} then escapes what JSON leaves
 * alone (C1 controls, bidirectional overrides, line separators), so no terminal acts on it.
 */
export function showValue(value: unknown): string {
  if (typeof value === 'string') return visibleText(JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value));
  if (typeof value === 'bigint') return `${value}n`;
  return String(value);
}

/** An option's key as it appears in an error message: plain names bare, anything else quoted. */
export function showKey(key: string): string {
  return /^[A-Za-z_$][\w$]{0,59}$/.test(key) ? key : showValue(key);
}

/** True for text every store keeps as it is: no lone surrogate (and so a UTF-8 form). */
export function isWellFormedText(value: string): boolean {
  return !LONE_SURROGATE.test(value);
}

/** A wire name: letters, digits and `_ . : - /`, starting with a letter or digit, at most `maxLength` long. */
export function assertWireName(value: unknown, maxLength: number, argument = 'name'): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > maxLength || !WIRE_NAME.test(value)) {
    throw new InvalidArgumentError(
      `${argument} must be 1 to ${maxLength} characters of letters, digits and "_ . : - /", starting with a letter or digit, got ${showValue(value)}.`,
      argument,
    );
  }
  return value;
}

/** A queue name: 1 to 64 letters, digits and `_ . : -`, starting with a letter or digit. */
export function assertQueueName(value: unknown, argument = 'queue'): string {
  if (typeof value !== 'string' || !QUEUE_NAME.test(value)) {
    throw new InvalidArgumentError(
      `${argument} must be 1 to 64 characters of letters, digits and "_ . : -", starting with a letter or digit, got ${showValue(value)}.`,
      argument,
    );
  }
  return value;
}

/**
 * A job or schedule id: UUID text of any version and variant, in any form the Rust scheduler reads
 * (see {@link canonicalUuid}), returned lower-case and hyphenated, as every store keeps it.
 */
export function assertUuid(value: unknown, argument: string): string {
  const canonical = typeof value === 'string' ? canonicalUuid(value) : null;
  if (canonical === null) throw new InvalidArgumentError(`${argument} must be a UUID, got ${showValue(value)}.`, argument);
  return canonical;
}

/** A `maxAttempts`: a whole number from 1 to the limits' ceiling. */
export function assertMaxAttempts(value: unknown, ceiling: number, argument = 'maxAttempts'): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > ceiling) {
    throw new InvalidArgumentError(`${argument} must be a whole number from 1 to ${ceiling}, got ${showValue(value)}.`, argument);
  }
  return value;
}

/** Most urgent priority: claims take lower numbers first. */
export const MIN_PRIORITY = -10;
/** Least urgent priority. */
export const MAX_PRIORITY = 10;
/** The priority of a job that sets none. */
export const DEFAULT_PRIORITY = 0;

/**
 * A priority: a whole number from {@link MIN_PRIORITY} to {@link MAX_PRIORITY}, lower first. The
 * range is small on purpose: a claim probes the claim index once per priority in use, so the
 * number of distinct priorities bounds what a claim can cost (docs/priorities.md).
 */
export function assertPriority(value: unknown, argument = 'priority'): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < MIN_PRIORITY || value > MAX_PRIORITY) {
    throw new InvalidArgumentError(`${argument} must be a whole number from ${MIN_PRIORITY} (first) to ${MAX_PRIORITY} (last), got ${showValue(value)}.`, argument);
  }
  return value;
}

/** A delay: finite, from zero to {@link MAX_DELAY_MS}; fractions round up to the next millisecond. */
export function assertDelayMs(value: unknown, argument: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new InvalidArgumentError(`${argument} must be a finite number of milliseconds at or above 0, got ${showValue(value)}.`, argument);
  }
  if (value > MAX_DELAY_MS) {
    throw new InvalidArgumentError(`${argument} must be at most ${MAX_DELAY_MS} milliseconds (100 years), got ${showValue(value)}.`, argument);
  }
  return Math.ceil(value);
}

/** An instant every store can hold: a valid Date in the years 0000 to 9999. */
export function assertInstant(value: unknown, argument: string): number {
  const ms = value instanceof Date ? value.getTime() : Number.NaN;
  if (!Number.isFinite(ms)) throw new InvalidArgumentError(`${argument} must be a valid Date, got ${showValue(value)}.`, argument);
  if (ms < MIN_INSTANT_MS || ms > MAX_INSTANT_MS) {
    throw new InvalidArgumentError(`${argument} must fall in the years 0000 to 9999, got ${ms} ms since the epoch.`, argument);
  }
  return ms;
}

/** A whole number from 1 to `max`. */
export function assertPositiveInteger(value: unknown, argument: string, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw new InvalidArgumentError(`${argument} must be a whole number from 1 to ${max}, got ${showValue(value)}.`, argument);
  }
  return value;
}

/** The most starts a rate limit allows per window. */
export const MAX_RATE_STARTS = 10_000;
/** The longest window a rate limit may have: a day. */
export const MAX_RATE_WINDOW_MS = 86_400_000;

/**
 * Checks a rate, `{ max, perMs }`: at most `max` starts (1 to 10,000) in any window of `perMs`
 * milliseconds (1 to a day). Other keys are refused, so a misspelt one is not silently dropped.
 */
export function assertRate(value: unknown, argument = 'rateLimit'): { readonly max: number; readonly perMs: number } {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidArgumentError(`${argument} must be an object { max, perMs }, got ${showValue(value)}.`, argument);
  }
  const unknown = Object.keys(value).find((key) => key !== 'max' && key !== 'perMs');
  if (unknown !== undefined) throw new InvalidArgumentError(`${argument} has an unknown key ${showKey(unknown)}; it takes { max, perMs }.`, argument);
  const { max, perMs } = value as { max?: unknown; perMs?: unknown };
  return { max: assertPositiveInteger(max, `${argument}.max`, MAX_RATE_STARTS), perMs: assertPositiveInteger(perMs, `${argument}.perMs`, MAX_RATE_WINDOW_MS) };
}

/**
 * A key, label or id chosen by the caller (a concurrency key, an observer id, a worker id, an
 * actor): 1 to `maxLength` characters of well-formed text without control characters, so every
 * store keeps it byte for byte and no log line can be split by it. Quotes, `$` and `;` are fine:
 * such values only ever travel as bound parameters.
 */
export function assertNonEmptyString(value: unknown, argument: string, maxLength = 256): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > maxLength || CONTROL.test(value) || !isWellFormedText(value)) {
    throw new InvalidArgumentError(`${argument} must be 1 to ${maxLength} characters without control characters, got ${showValue(value)}.`, argument);
  }
  return value;
}
