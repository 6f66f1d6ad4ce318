import { afterEach, describe, expect, it } from '@jest/globals';
import { AttemptAbort } from '../../lib/worker/attempt-abort.js';

const RealAbortController = globalThis.AbortController;
let made = 0;
afterEach(() => {
  globalThis.AbortController = RealAbortController;
});
function countControllers() {
  made = 0;
  globalThis.AbortController = class extends RealAbortController {
    constructor() {
      super();
      made += 1;
    }
  };
}

describe('AttemptAbort', () => {
  it('makes no AbortController for an attempt that nobody aborts and whose signal nobody reads', () => {
    countControllers();
    const abort = new AttemptAbort();
    expect(made).toBe(0);
    expect(abort.signal.aborted).toBe(false);
    expect(made).toBe(1);
    void abort.signal;
    expect(made).toBe(1);
  });

  it('hands out an already aborted signal, with the first reason, when it is read after an abort', () => {
    const abort = new AttemptAbort();
    abort.abort('lease_lost');
    abort.abort('shutdown');
    expect(abort.signal.aborted).toBe(true);
    expect(abort.signal.reason).toBe('lease_lost');
  });

  it('aborts a signal read earlier, once, with the first reason', () => {
    const abort = new AttemptAbort();
    const seen: unknown[] = [];
    abort.signal.addEventListener('abort', () => seen.push(abort.signal.reason));
    abort.abort(new Error('timed out'));
    abort.abort('shutdown');
    expect(seen).toHaveLength(1);
    expect(String(seen[0])).toBe('Error: timed out');
  });

  it('gives an abort without a reason the AbortError an AbortController gives', () => {
    const abort = new AttemptAbort();
    abort.abort();
    expect((abort.signal.reason as Error).name).toBe('AbortError');
  });
});
