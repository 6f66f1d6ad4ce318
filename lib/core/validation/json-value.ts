import { InvalidArgumentError, PayloadTooLargeError } from '../errors/index.js';
import { isWellFormedText } from './job-fields.js';

export interface JsonEncodeOptions {
  /** Names the value in error messages, e.g. `payload` or `output`. */
  readonly argument: string;
  readonly maxBytes: number;
  readonly maxDepth: number;
}

/**
 * Encodes a payload or output as JSON text, refusing anything JSON would silently change or that a
 * store cannot keep: cycles, BigInt, functions, symbols, non-finite numbers, Map and Set (which
 * JSON turns into `{}`), `__proto__` keys, the NUL character and lone UTF-16 surrogates (PostgreSQL's
 * jsonb can hold neither, and the other stores must refuse what it refuses), nesting deeper than
 * `maxDepth`, and text longer than `maxBytes`.
 */
export function encodeJson(value: unknown, options: JsonEncodeOptions): string {
  const { argument } = options;
  if (value === undefined) {
    throw new InvalidArgumentError(`${argument} must be a JSON value, got undefined.`, argument);
  }
  check(value, options, 0, new Set<object>(), true);
  const text = JSON.stringify(value);
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > options.maxBytes) {
    throw new PayloadTooLargeError(
      `${argument} is ${bytes} bytes as JSON, over the limit of ${options.maxBytes} bytes.`,
      argument,
      bytes,
      options.maxBytes,
    );
  }
  return text;
}

/** `viaToJson` is false for what a `toJSON` call returned: JSON.stringify does not call `toJSON` on that again. */
function check(value: unknown, options: JsonEncodeOptions, depth: number, ancestors: Set<object>, viaToJson: boolean): void {
  const { argument } = options;
  switch (typeof value) {
    case 'string':
      checkText(value, argument, 'contains');
      return;
    case 'number':
      if (!Number.isFinite(value)) refuse(argument, `contains the number ${value}, which JSON cannot represent`);
      return;
    case 'boolean':
      return;
    case 'bigint':
      refuse(argument, 'contains a BigInt, which JSON cannot represent; send it as a string');
      return;
    case 'function':
    case 'symbol':
      refuse(argument, `contains a ${typeof value}, which JSON cannot represent`);
      return;
    case 'undefined':
      return; // dropped from objects and written as null in arrays, exactly as JSON.stringify does
  }
  if (value === null) return;
  const object = value as object;
  if (ancestors.has(object)) refuse(argument, 'contains a circular reference');
  if (depth >= options.maxDepth) refuse(argument, `is nested more than ${options.maxDepth} levels deep`);
  if (object instanceof Map || object instanceof Set) {
    refuse(argument, `contains a ${object.constructor.name}, which JSON would turn into an empty object`);
  }
  if (viaToJson && typeof (object as { toJSON?: unknown }).toJSON === 'function') {
    // Dates and similar types choose their own JSON form; check what they produce instead.
    let json: unknown;
    try {
      json = (object as { toJSON(): unknown }).toJSON();
    } catch {
      refuse(argument, 'contains a value whose toJSON method threw');
    }
    check(json, options, depth, ancestors, false);
    return;
  }
  ancestors.add(object);
  if (Array.isArray(object)) {
    for (const item of object) check(item, options, depth + 1, ancestors, true);
  } else {
    for (const key of Object.keys(object)) {
      if (key === '__proto__') refuse(argument, 'has a "__proto__" key, which is refused to keep consumers safe from prototype pollution');
      checkText(key, argument, 'has a key containing');
      check((object as Record<string, unknown>)[key], options, depth + 1, ancestors, true);
    }
  }
  ancestors.delete(object);
}

/** Text PostgreSQL's jsonb cannot hold is refused in every store, so all three accept the same payloads. */
function checkText(text: string, argument: string, where: 'contains' | 'has a key containing'): void {
  if (text.includes('\u0000')) refuse(argument, `${where} the NUL character (\\u0000), which PostgreSQL cannot store in JSON`);
  if (!isWellFormedText(text)) refuse(argument, `${where} a lone UTF-16 surrogate, which has no UTF-8 form and which PostgreSQL cannot store in JSON`);
}

function refuse(argument: string, problem: string): never {
  throw new InvalidArgumentError(`${argument} ${problem}.`, argument);
}
