import { InvalidArgumentError, showValue } from '../../core/index.js';

/** Refuses a params argument that is not a plain object, naming the method and the shape it takes. */
export function paramsObject<T>(method: string, params: T, shape: string): T {
  if (params === null || typeof params !== 'object' || Array.isArray(params)) {
    throw new InvalidArgumentError(`${method} takes a params object like ${shape}, got ${showValue(params)}.`, 'params');
  }
  return params;
}
