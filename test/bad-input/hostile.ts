import { expect } from '@jest/globals';
import { SchedulerError } from '../../lib/core/index.js';

/**
 * The hostile identifiers every field that takes a name, key or id is tried with. Some are valid
 * for some fields (`x.job` is a fine wire name); the catalogue says, field by field, which.
 */
export const HOSTILE = {
  quote: "o'brien",
  doubleQuote: 'a"b',
  dollars: 'a$$b',
  dotted: 'x.job',
  newline: 'a\nb',
  drop: ';drop',
  long: 'l'.repeat(64),
} as const;

/**
 * Error and output text an attacker controls (a handler's error quoting a payload), aimed at the
 * terminal or log that shows it: colours and cursor moves, a clear screen, a carriage return that
 * overwrites a line, a bell, an OSC 8 hyperlink and an OSC title change, backspaces, the 8-bit CSI,
 * a right-to-left override, a Unicode line separator, NUL, DEL and a lone surrogate.
 */
export const HOSTILE_TEXT = {
  colour: '\u001b[31mred\u001b[0m',
  clear: 'x\u001b[2J\u001b[H',
  carriageReturn: 'real error\rforged line',
  bell: 'ding\u0007',
  osc8: '\u001b]8;;https://evil.example/\u001b\\click me\u001b]8;;\u001b\\',
  title: '\u001b]0;owned\u0007',
  backspace: 'secret\b\b\b\b\b\bpublic',
  csi8bit: '\u009b31mred',
  bidi: 'invoice \u202egnp.exe',
  separator: 'one\u2028two',
  nul: 'a\u0000b',
  del: 'a\u007fb',
  surrogate: 'a\ud800b',
  newline: 'first\nsecond',
} as const;

/** Code points that must never reach a terminal raw: C0 (but the line feeds and tabs a CLI itself writes), DEL, C1, bidi controls, separators. */
export const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/u;

export type HostileName = keyof typeof HOSTILE;
export const HOSTILE_NAMES = Object.keys(HOSTILE) as HostileName[];

/** What a field does with each hostile identifier. */
export type Verdict = 'accepted' | 'refused';
export type Rule = Record<HostileName, Verdict>;

const rule = (accepted: readonly HostileName[]): Rule =>
  Object.fromEntries(HOSTILE_NAMES.map((name) => [name, accepted.includes(name) ? 'accepted' : 'refused'])) as Rule;

/**
 * The decision per field, as README "Input rules" documents it:
 * - wire names: letters, digits and `_ . : - /`, 1 to 128 characters;
 * - queue names: the same without `/`, 1 to 64 characters;
 * - job and schedule ids: UUIDs only;
 * - concurrency and limit keys, observer ids, worker ids, actors: any text of 1 to 200
 *   characters without control characters (they only travel as bound parameters);
 * - schema, table prefix and CLI --table: lower-case SQL identifiers of at most 63 characters.
 */
export const RULES = {
  wireName: rule(['dotted', 'long']),
  queue: rule(['dotted', 'long']),
  uuid: rule([]),
  key: rule(['quote', 'doubleQuote', 'dollars', 'dotted', 'drop', 'long']),
  sqlIdentifier: rule([]),
} as const;

export type ErrorClass = abstract new (...args: never[]) => Error;

/** Settles `run` and returns what it threw (failing the test when it did not throw). */
export async function thrown(run: () => unknown): Promise<Error> {
  let result: unknown;
  try {
    result = await run();
  } catch (error) {
    return error as Error;
  }
  throw new Error(`expected a refusal, but the call succeeded with ${JSON.stringify(result)?.slice(0, 200)}`);
}

/**
 * The shape every refusal must have: the expected typed error, a SchedulerError with a stable
 * code, and a message that is one clear sentence (one line, ending in a full stop) naming the
 * field, whose `argument` says which one.
 */
export function expectTypedRefusal(error: Error, type: ErrorClass, field: RegExp): void {
  expect(error).toBeInstanceOf(type);
  expect(error).toBeInstanceOf(SchedulerError);
  expect(typeof (error as SchedulerError).code).toBe('string');
  expect(error.message).toMatch(/^[^\n\r]+\.$/);
  expect(error.message).not.toMatch(/\.\s+[A-Z][a-z]+ [a-z]+.*\.$/); // no second sentence
  expect(error.message).toMatch(field);
}

/** Every table (or, in memory, every collection) of a store, as comparable data. */
export type Snapshot = () => Promise<unknown>;

/** A deep, comparable copy of an in-memory store's state: every Map, Set, array and record it holds. */
export function memoryState(store: object, skip: readonly string[]): unknown {
  const plain = (value: unknown): unknown => {
    if (value instanceof Map) return [...value.entries()].map(([k, v]) => [plain(k), plain(v)]);
    if (value instanceof Set) return [...value.values()].map(plain).sort();
    if (value instanceof Date) return value.toISOString();
    if (Array.isArray(value)) return value.map(plain);
    if (typeof value === 'function') return undefined;
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).filter(([, v]) => typeof v !== 'function').map(([k, v]) => [k, plain(v)]));
    }
    return value;
  };
  return Object.fromEntries(
    Object.entries(store)
      .filter(([key, value]) => !skip.includes(key) && typeof value !== 'function')
      .map(([key, value]) => [key, plain(value)]),
  );
}
