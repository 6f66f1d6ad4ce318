import { InvalidArgumentError } from '../errors/index.js';
import { showKey, showValue } from './job-fields.js';

/**
 * How {@link checkOptions} names what it checks. Every refusal is one sentence, so a caller
 * reads, from the message alone, which key was wrong and where the right ones are listed.
 */
export interface OptionsSubject {
  /** What the options configure, as a reader knows it: `waitFor`, `SchedulerModule`, `enqueue`. */
  readonly what: string;
  /** The argument's name in a refusal of a non-object (`options must be an object…`). Default `options`. */
  readonly argument?: string;
  /** A prefix for the keys a refusal names, such as `jobs[2].` for one job of a batch. */
  readonly where?: string;
  /** Where the options are documented, said instead of the list when there are too many to list. */
  readonly docs?: string;
}

/** More known keys than this are not listed in a refusal; the subject's `docs` page is named instead. */
const LISTED_KEYS = 12;
/** More unknown keys than this are counted, not named. */
const NAMED_UNKNOWN = 3;

/**
 * Checks an options object: `undefined` passes (as no options), anything but a plain object (an
 * array, a function, a Map, a Promise of options, a string) is refused, and so is any own key
 * not in `known`. A misspelt option would otherwise be dropped in silence and its default used:
 * `waitFor(id, { timeout: 5 })` waited forever. The refusal names the unknown key, made safe to
 * print, and the nearest known key when one is close.
 */
export function checkOptions<T extends object>(options: T | undefined, known: Iterable<string>, subject: OptionsSubject): T | undefined {
  if (options === undefined) return undefined;
  assertOptionsObject(options, subject.argument ?? 'options');
  const knownKeys = known instanceof Set ? (known as ReadonlySet<string>) : new Set(known);
  const unknown = Object.keys(options).filter((key) => !knownKeys.has(key));
  if (unknown.length > 0) throw unknownOptions(unknown, [...knownKeys], subject);
  return options;
}

/** Refuses anything but an object whose tag is `Object` (a literal, a null-prototype object or a class instance). */
export function assertOptionsObject(value: unknown, argument: string): asserts value is object {
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && Object.prototype.toString.call(value) === '[object Object]') return;
  throw new InvalidArgumentError(`${argument} must be an object, got ${describe(value)}.`, argument);
}

/** A refused value as a sentence says it: a kind for objects, the value for the rest. */
function describe(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'function') return 'a function';
  if (value !== null && typeof value === 'object') {
    const tag = Object.prototype.toString.call(value).slice('[object '.length, -1);
    return `${/^[AEIOU]/.test(tag) ? 'an' : 'a'} ${showKey(tag)}`;
  }
  return showValue(value);
}

function unknownOptions(unknown: readonly string[], known: readonly string[], subject: OptionsSubject): InvalidArgumentError {
  const where = subject.where ?? '';
  const named = unknown.slice(0, NAMED_UNKNOWN).map((key) => `${where}${showKey(key)}`);
  const more = unknown.length - named.length;
  const keys = more > 0 ? `${named.join(', ')} and ${more} more` : named.length > 1 ? `${named.slice(0, -1).join(', ')} and ${named.at(-1)}` : named[0]!;
  const verb = unknown.length > 1 ? `are not known ${subject.what} options` : `is not a known ${subject.what} option`;
  const near = nearestKey(unknown[0]!, known);
  const hint = near === undefined ? '' : ` (did you mean ${near}?)`;
  const rest = known.length <= LISTED_KEYS || subject.docs === undefined ? `known options are ${known.join(', ')}` : `see ${subject.docs} for the options`;
  return new InvalidArgumentError(`${keys} ${verb}${hint}; ${rest}.`, `${where}${unknown[0]}`);
}

/**
 * The known key a typo most likely meant: one that differs only in case, that the key starts or
 * is the start of (`timeout` for `timeoutMs`), or within a small edit distance. Undefined when
 * none is close enough to be worth saying.
 */
export function nearestKey(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  if (lower.length === 0 || lower.length > 64) return undefined;
  // Longer keys tolerate more typos; a short one would otherwise be "near" half the list.
  const reach = Math.max(1, Math.min(3, Math.floor(lower.length / 3)));
  let best: string | undefined;
  let bestDistance = reach + 1;
  for (const candidate of known) {
    const other = candidate.toLowerCase();
    if (other === lower) return candidate;
    const prefix = lower.length >= 4 && (other.startsWith(lower) || lower.startsWith(other));
    const distance = prefix ? 1 : editDistance(lower, other, reach);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** Levenshtein distance, or `cap + 1` once it is sure to exceed `cap`. */
function editDistance(a: string, b: string, cap: number): number {
  if (Math.abs(a.length - b.length) > cap) return cap + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      rowMin = Math.min(rowMin, current[j]!);
    }
    if (rowMin > cap) return cap + 1;
    previous = current;
  }
  return previous[b.length]!;
}
