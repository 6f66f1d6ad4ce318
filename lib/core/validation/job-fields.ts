import { validate as isUuid } from 'uuid';
import { InvalidArgumentError } from '../errors/index.js';

/** Wire names: a letter or digit, then letters, digits and `_ . : - /`. */
const WIRE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:\-/]*$/;
/** Queue names: the same alphabet without `/`, at most 64 characters. */
const QUEUE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;

function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  if (typeof value === 'bigint') return `${value}n`;
  return String(value);
}

export function assertWireName(value: unknown, maxLength: number, argument = 'name'): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > maxLength || !WIRE_NAME.test(value)) {
    throw new InvalidArgumentError(
      `${argument} must be 1 to ${maxLength} characters of letters, digits and "_ . : - /", starting with a letter or digit, got ${show(value)}.`,
      argument,
    );
  }
  return value;
}

export function assertQueueName(value: unknown, argument = 'queue'): string {
  if (typeof value !== 'string' || !QUEUE_NAME.test(value)) {
    throw new InvalidArgumentError(
      `${argument} must be 1 to 64 characters of letters, digits and "_ . : -", starting with a letter or digit, got ${show(value)}.`,
      argument,
    );
  }
  return value;
}

export function assertUuid(value: unknown, argument: string): string {
  if (typeof value !== 'string' || !isUuid(value)) {
    throw new InvalidArgumentError(`${argument} must be a UUID, got ${show(value)}.`, argument);
  }
  return value.toLowerCase();
}

export function assertMaxAttempts(value: unknown, ceiling: number, argument = 'maxAttempts'): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > ceiling) {
    throw new InvalidArgumentError(`${argument} must be a whole number from 1 to ${ceiling}, got ${show(value)}.`, argument);
  }
  return value;
}

/** A delay: finite, at or above zero; fractions round up to the next millisecond. */
export function assertDelayMs(value: unknown, argument: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new InvalidArgumentError(`${argument} must be a finite number of milliseconds at or above 0, got ${show(value)}.`, argument);
  }
  return Math.ceil(value);
}

export function assertInstant(value: unknown, argument: string): number {
  const ms = value instanceof Date ? value.getTime() : Number.NaN;
  if (!Number.isFinite(ms)) throw new InvalidArgumentError(`${argument} must be a valid Date, got ${show(value)}.`, argument);
  return ms;
}

export function assertPositiveInteger(value: unknown, argument: string, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw new InvalidArgumentError(`${argument} must be a whole number from 1 to ${max}, got ${show(value)}.`, argument);
  }
  return value;
}

export function assertNonEmptyString(value: unknown, argument: string, maxLength = 256): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > maxLength) {
    throw new InvalidArgumentError(`${argument} must be a non-empty string of at most ${maxLength} characters, got ${show(value)}.`, argument);
  }
  return value;
}
