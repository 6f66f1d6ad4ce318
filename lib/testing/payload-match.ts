import { visibleText } from '../core/index.js';

/**
 * What `expectEnqueued` compares a payload with: a predicate, or a value. A value matches a payload
 * equal to it, key for key; anywhere inside it an asymmetric matcher (jest's
 * `expect.objectContaining`, `expect.any(String)` and the like: anything with `asymmetricMatch`)
 * decides for its part, so the kit works with jest without importing it.
 */
export type PayloadMatcher = ((payload: unknown) => boolean) | unknown;

interface AsymmetricMatcher {
  asymmetricMatch(other: unknown): boolean;
  toString?(): string;
  toAsymmetricMatcher?(): string;
}

function isAsymmetric(value: unknown): value is AsymmetricMatcher {
  return value !== null && typeof value === 'object' && typeof (value as { asymmetricMatch?: unknown }).asymmetricMatch === 'function';
}

/** True when `payload` matches `expected` (see {@link PayloadMatcher}). */
export function payloadMatches(payload: unknown, expected: PayloadMatcher): boolean {
  if (typeof expected === 'function') return Boolean((expected as (payload: unknown) => unknown)(payload));
  return matches(payload, expected);
}

function matches(actual: unknown, expected: unknown): boolean {
  if (isAsymmetric(expected)) return expected.asymmetricMatch(actual);
  if (Object.is(actual, expected)) return true;
  if (expected === null || typeof expected !== 'object' || actual === null || typeof actual !== 'object') return false;
  if (Array.isArray(expected) !== Array.isArray(actual)) return false;
  const expectedKeys = Object.keys(expected).filter((key) => (expected as Record<string, unknown>)[key] !== undefined);
  const actualKeys = Object.keys(actual).filter((key) => (actual as Record<string, unknown>)[key] !== undefined);
  if (expectedKeys.length !== actualKeys.length) return false;
  return expectedKeys.every((key) => Object.hasOwn(actual, key) && matches((actual as Record<string, unknown>)[key], (expected as Record<string, unknown>)[key]));
}

/** Longest rendering of one payload in an assertion message: a huge payload is cut, never dumped. */
const PREVIEW_CHARS = 120;

/** A payload or a matcher as one short, escaped line. */
export function preview(value: unknown): string {
  if (typeof value === 'function') return value.name ? `a predicate (${value.name})` : 'a predicate';
  if (isAsymmetric(value)) return value.toAsymmetricMatcher?.() ?? value.toString?.() ?? 'an asymmetric matcher';
  let text: string;
  try {
    text = JSON.stringify(value, (_key, inner: unknown) => (isAsymmetric(inner) ? (inner.toAsymmetricMatcher?.() ?? inner.toString?.() ?? '<matcher>') : inner)) ?? String(value);
  } catch {
    text = String(value);
  }
  return visibleText(text, { maxLength: PREVIEW_CHARS });
}
