import { checkOptions, InvalidArgumentError, showValue } from '../../core/index.js';

/** The keys a shape such as `{ jobId, actor? }` names, parsed once per shape. */
const shapeKeys = new Map<string, ReadonlySet<string>>();

function keysOf(shape: string): ReadonlySet<string> {
  let keys = shapeKeys.get(shape);
  if (keys === undefined) {
    keys = new Set(shape.replace(/[{}?\s]/g, '').split(',').filter((key) => key.length > 0));
    shapeKeys.set(shape, keys);
  }
  return keys;
}

/**
 * Refuses a params argument that is not an object (undefined, null, a string, an array) with one
 * sentence naming the method and the fields it wants, before any other check reads a field, and
 * refuses a key the shape does not name: a misspelt optional field would otherwise be dropped in
 * silence. Every adapter method that takes params calls it first, so `shape` is the one list of
 * the fields a method takes.
 */
export function paramsOf<T extends object>(method: string, params: T, shape: string): T {
  if (params === null || typeof params !== 'object' || Array.isArray(params)) {
    const got = Array.isArray(params) ? 'an array' : typeof params === 'function' ? 'a function' : showValue(params);
    throw new InvalidArgumentError(`${method} takes a params object like ${shape}, got ${got}.`, 'params');
  }
  checkOptions(params, keysOf(shape), { what: method });
  return params;
}

/** {@link paramsOf} for a method whose params may be left out: undefined passes, as no params. */
export function optionalParamsOf<T extends object>(method: string, params: T | undefined, shape: string): T | undefined {
  return params === undefined ? undefined : paramsOf(method, params, shape);
}
