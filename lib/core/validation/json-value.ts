import { types } from 'node:util';
import { InvalidArgumentError, PayloadTooLargeError } from '../errors/index.js';
import { isWellFormedText } from './job-fields.js';
import { writeDeepJson } from './json-deep-writer.js';

/** How {@link encodeJson} bounds and names the value it encodes. */
export interface JsonEncodeOptions {
  /** Names the value in error messages, e.g. `payload` or `output`. */
  readonly argument: string;
  readonly maxBytes: number;
  readonly maxDepth: number;
}

/**
 * Encodes a payload or output as JSON text, refusing anything JSON would silently change or that a
 * store cannot keep: cycles, BigInt (boxed or not), functions, symbols, non-finite numbers (boxed
 * or not), Map and Set (which JSON turns into `{}`), `__proto__` keys, the NUL character and lone
 * UTF-16 surrogates (PostgreSQL's jsonb can hold neither, and the other stores must refuse what it
 * refuses), nesting deeper than `maxDepth`, and text longer than `maxBytes`.
 *
 * The value is walked once, reading every property, getter and `toJSON` exactly once into a plain
 * copy, and the text is written from that copy, so the value checked is the value written: a
 * getter cannot answer one thing to the check and another to the writer. Otherwise it follows
 * JSON.stringify: `toJSON` is called once with the member's key (Dates become ISO text), undefined
 * members are left out of objects and written as null in arrays, and Number, String and Boolean
 * objects are written as their primitive value. The walk keeps its own stack, so no depth exhausts
 * the call stack. A getter, Proxy trap or `toJSON` that throws is refused with the member's path.
 */
export function encodeJson(value: unknown, options: JsonEncodeOptions): string {
  const { argument } = options;
  if (value === undefined) {
    throw new InvalidArgumentError(`${argument} must be a JSON value, got undefined.`, argument);
  }
  const snapshot = new JsonSnapshot(options);
  const copy = snapshot.take(value);
  // JSON.stringify recurses on the call stack, about 4,000 levels deep at most; deeper copies are
  // written by a loop. Stores cap maxJsonDepth at 1,000, so only a direct call goes that deep.
  const text = snapshot.deepest < NATIVE_DEPTH ? JSON.stringify(copy) : writeDeepJson(copy);
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > options.maxBytes) throw tooLarge(options, bytes, false);
  return text;
}

const NATIVE_DEPTH = 1_000;

/**
 * Cycles are found by scanning this many of the open containers and by a Set for the rest: payloads
 * are rarely deeper, and a Set costs every object it holds an identity hash.
 */
const SCANNED = 32;

/**
 * Sizes are counted exactly up to this many times the limit. Past that the walk stops: every
 * character takes at least one UTF-8 byte, so the value is certainly too large, and walking on (a
 * sparse array of a billion holes, say) would only spend time and memory.
 */
const EXACT_SIZE_FACTOR = 4;

/** An array or object being copied: its members still to read and where it sits. */
interface Frame {
  readonly source: object;
  readonly copy: unknown[] | Record<string, unknown>;
  /** The member keys of an object; null for an array. */
  readonly keys: readonly string[] | null;
  readonly length: number;
  /** The next member to read. */
  index: number;
  /** The key or index this container sits under in its parent, for error messages. */
  readonly key: string | number;
}

class JsonSnapshot {
  /** The deepest nesting the copy reached. */
  deepest = 0;
  private readonly stack: Frame[] = [];
  /** The open containers below the first {@link SCANNED} of the stack, which are scanned instead. */
  private readonly deepOpen = new Set<object>();
  /** The key or index being read in the innermost frame, for error messages. */
  private reading: string | number | null = null;
  private refusal: InvalidArgumentError | null = null;
  /** A lower bound on the JSON text's length, to stop walking a value certainly too large. */
  private size = 0;
  private readonly sizeCap: number;

  constructor(private readonly options: JsonEncodeOptions) {
    this.sizeCap = options.maxBytes * EXACT_SIZE_FACTOR;
  }

  /** The plain copy of `root`: only arrays, plain objects, strings, finite numbers, booleans and null. */
  take(root: unknown): unknown {
    try {
      const copy = this.plain(this.resolve(root, ''), '');
      if (copy === undefined) this.refuse('must be a JSON value, got undefined');
      while (this.stack.length > 0) this.step(this.stack[this.stack.length - 1]!);
      return copy;
    } catch (error) {
      if (error === this.refusal || error instanceof PayloadTooLargeError) throw error;
      // Anything else came from the caller's own code: a getter, a Proxy trap or a toJSON method.
      const kind = errorClass(error);
      throw new InvalidArgumentError(
        `${this.options.argument} could not be read: a getter, Proxy trap or toJSON method threw${kind} at ${this.path()}.`,
        this.options.argument,
      );
    }
  }

  /** Copies the next member of `frame`, or closes it. */
  private step(frame: Frame): void {
    if (frame.index === frame.length) {
      this.stack.pop();
      if (this.stack.length >= SCANNED) this.deepOpen.delete(frame.source);
      return;
    }
    const i = frame.index++;
    if (frame.keys === null) {
      this.reading = i;
      const value = this.plain(this.resolve((frame.source as unknown[])[i], i), i);
      (frame.copy as unknown[]).push(value === undefined ? null : value);
      this.size += value === undefined ? 5 : 1; // the comma, and null for undefined
    } else {
      const key = (this.reading = frame.keys[i]!);
      if (key === '__proto__') this.refuse('has a "__proto__" key, which is refused to keep consumers safe from prototype pollution');
      this.checkText(key, 'has a key containing');
      const value = this.plain(this.resolve((frame.source as Record<string, unknown>)[key], key), key);
      if (value !== undefined) {
        (frame.copy as Record<string, unknown>)[key] = value;
        this.size += key.length + 3; // the quotes, the colon and the comma
      }
    }
    this.reading = null;
    if (this.size > this.sizeCap) throw tooLarge(this.options, this.size, true);
  }

  /**
   * The value JSON writes for `value` under `key`: what its `toJSON` returns (called once, and not
   * again on its result, as JSON.stringify does), with boxed primitives unboxed by their internal
   * value, which no valueOf or toString override can change.
   */
  private resolve(value: unknown, key: string | number): unknown {
    if (typeof value !== 'object' || value === null) return value;
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') value = toJSON.call(value, String(key));
    if (typeof value !== 'object' || value === null || !types.isBoxedPrimitive(value)) return value;
    if (types.isNumberObject(value)) return Number.prototype.valueOf.call(value);
    if (types.isStringObject(value)) return String.prototype.valueOf.call(value);
    if (types.isBooleanObject(value)) return Boolean.prototype.valueOf.call(value);
    if (types.isBigIntObject(value)) this.refuse('contains a boxed BigInt, which JSON cannot represent; send it as a string');
    this.refuse('contains a boxed symbol, which JSON cannot represent');
  }

  /** The copy of a resolved value; an array or object gets an empty copy and a frame to fill it. */
  private plain(value: unknown, key: string | number): unknown {
    switch (typeof value) {
      case 'string':
        this.checkText(value, 'contains');
        this.size += value.length + 2;
        return value;
      case 'number':
        if (!Number.isFinite(value)) this.refuse(`contains the number ${value}, which JSON cannot represent`);
        this.size += 1;
        return value;
      case 'boolean':
        this.size += 4;
        return value;
      case 'undefined':
        return undefined;
      case 'bigint':
        this.refuse('contains a BigInt, which JSON cannot represent; send it as a string');
        break;
      case 'function':
      case 'symbol':
        this.refuse(`contains a ${typeof value}, which JSON cannot represent`);
    }
    if (value === null) {
      this.size += 4;
      return null;
    }
    const object = value as object;
    const depth = this.stack.length;
    if (this.isOpen(object, depth)) this.refuse('contains a circular reference');
    if (depth >= this.options.maxDepth) this.refuse(`is nested more than ${this.options.maxDepth} levels deep`);
    if (object instanceof Map || object instanceof Set) {
      this.refuse(`contains a ${object instanceof Map ? 'Map' : 'Set'}, which JSON would turn into an empty object`);
    }
    // Read once: a Proxy's traps or a getter on length answer this walk and nothing else.
    const keys = Array.isArray(object) ? null : Object.keys(object);
    const length = keys === null ? arrayLength((object as unknown[]).length) : keys.length;
    const copy = keys === null ? [] : {};
    this.stack.push({ source: object, copy, keys, length, index: 0, key });
    if (depth >= SCANNED) this.deepOpen.add(object);
    if (depth >= this.deepest) this.deepest = depth + 1;
    this.size += 2;
    return copy;
  }

  /** True when `object` is one of the containers being copied: a cycle. */
  private isOpen(object: object, depth: number): boolean {
    const scanned = Math.min(depth, SCANNED);
    for (let i = 0; i < scanned; i++) if (this.stack[i]!.source === object) return true;
    return depth > SCANNED && this.deepOpen.has(object);
  }

  /** Text PostgreSQL's jsonb cannot hold is refused in every store, so all three accept the same payloads. */
  private checkText(text: string, where: 'contains' | 'has a key containing'): void {
    if (text.includes('\u0000')) this.refuse(`${where} the NUL character (\\u0000), which PostgreSQL cannot store in JSON`);
    if (!isWellFormedText(text)) this.refuse(`${where} a lone UTF-16 surrogate, which has no UTF-8 form and which PostgreSQL cannot store in JSON`);
  }

  private refuse(problem: string): never {
    this.refusal = new InvalidArgumentError(`${this.options.argument} ${problem}.`, this.options.argument);
    throw this.refusal;
  }

  /** Where the walk is, as `payload.order.lines[3]`: at most 6 steps, each key escaped and cut. */
  private path(): string {
    const steps = this.stack.slice(1).map((frame) => frame.key);
    if (this.reading !== null) steps.push(this.reading);
    const shown = steps.map((key) => {
      if (typeof key === 'number') return `[${key}]`;
      return /^[A-Za-z_$][\w$]{0,39}$/.test(key) ? `.${key}` : `[${JSON.stringify(key.length > 40 ? `${key.slice(0, 40)}…` : key)}]`;
    });
    const cut = shown.length > 6 ? [...shown.slice(0, 2), '…', ...shown.slice(-3)] : shown;
    return `${this.options.argument}${cut.join('')}`;
  }
}

/** ` (TypeError)` for what the caller's code threw, when its class has a plain name; reading it must not throw in turn. */
function errorClass(error: unknown): string {
  try {
    return error instanceof Error && typeof error.name === 'string' && /^[A-Za-z_$][\w$]{0,40}$/.test(error.name) ? ` (${error.name})` : '';
  } catch {
    return '';
  }
}

/** An array's length as JSON.stringify reads it (ToLength): a Proxy may answer anything. */
function arrayLength(raw: unknown): number {
  const n = Math.trunc(Number(raw));
  return Number.isFinite(n) && n > 0 ? Math.min(n, Number.MAX_SAFE_INTEGER) : 0;
}

function tooLarge(options: JsonEncodeOptions, size: number, partial: boolean): PayloadTooLargeError {
  const { argument, maxBytes } = options;
  const bytes = partial ? `at least ${size}` : String(size);
  return new PayloadTooLargeError(`${argument} is ${bytes} bytes as JSON, over the limit of ${maxBytes} bytes.`, argument, size, maxBytes);
}
