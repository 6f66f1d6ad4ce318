/** A container being written: its members still to write. */
interface Frame {
  readonly value: unknown[] | Record<string, unknown>;
  /** The member keys of an object; null for an array. */
  readonly keys: readonly string[] | null;
  index: number;
}

/**
 * JSON text for a plain copy (arrays, plain objects, strings, finite numbers, booleans, null: what
 * encodeJson's walk builds), written by a loop rather than by recursion, so nesting of any depth
 * fits. The text is what JSON.stringify writes for the same copy; strings and keys are escaped by
 * JSON.stringify itself.
 */
export function writeDeepJson(root: unknown): string {
  const parts: string[] = [];
  const stack: Frame[] = [];
  const open = (value: unknown): void => {
    if (Array.isArray(value)) {
      parts.push('[');
      stack.push({ value, keys: null, index: 0 });
    } else if (value !== null && typeof value === 'object') {
      parts.push('{');
      stack.push({ value: value as Record<string, unknown>, keys: Object.keys(value), index: 0 });
    } else {
      parts.push(JSON.stringify(value));
    }
  };
  open(root);
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    const length = frame.keys === null ? (frame.value as unknown[]).length : frame.keys.length;
    if (frame.index === length) {
      parts.push(frame.keys === null ? ']' : '}');
      stack.pop();
      continue;
    }
    const i = frame.index++;
    if (i > 0) parts.push(',');
    if (frame.keys === null) {
      open((frame.value as unknown[])[i]);
    } else {
      const key = frame.keys[i]!;
      parts.push(JSON.stringify(key), ':');
      open((frame.value as Record<string, unknown>)[key]);
    }
  }
  return parts.join('');
}
