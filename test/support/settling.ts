/** The promise's outcome so far, without waiting for it. */
export function track<T>(promise: Promise<T>): { readonly value?: T; readonly error?: unknown; readonly settled: boolean } {
  const state: { value?: T; error?: unknown; settled: boolean } = { settled: false };
  promise.then(
    (value) => Object.assign(state, { value, settled: true }),
    (error: unknown) => Object.assign(state, { error, settled: true }),
  );
  return state;
}

/**
 * Lets the event loop turn a few times: what settles "at once" has settled after it. No time
 * passes on a fake clock, and none is waited for on the wall clock.
 */
export async function turns(count = 5): Promise<void> {
  for (let i = 0; i < count; i++) await new Promise((resolve) => setImmediate(resolve));
}
