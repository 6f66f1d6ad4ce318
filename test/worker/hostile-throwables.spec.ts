import { afterEach, describe, expect, it } from '@jest/globals';
import { SeededRandom } from '../../lib/core/index.js';
import { MemoryJobStore } from '../../lib/store/index.js';
import { describeError, errorDetail, errorText, FunctionInvoker, WorkerNode, type ErrorLogDetail } from '../../lib/worker/index.js';
import { ManualTimers, settle } from '../support/manual-timers.js';

/** An Error whose message, name and stack all throw when read. */
function errorWithThrowingGetters(): Error {
  const error = new Error('hidden');
  // The stack first: redefining it makes V8 format it, which reads the name and message.
  for (const key of ['stack', 'message', 'name']) {
    Object.defineProperty(error, key, {
      get() {
        throw new Error(`${key} is not readable`);
      },
    });
  }
  return error;
}

/** A Proxy whose every trap throws (`get`, `getPrototypeOf`, `has`, `ownKeys`, ...). */
function proxyThatThrowsOnEverything(target: object = {}): object {
  const traps = new Proxy(
    {},
    {
      get: () => () => {
        throw new Error('trapped');
      },
    },
  );
  return new Proxy(target, traps);
}

const HOSTILE: ReadonlyArray<{ what: string; value: () => unknown; lastError: string }> = [
  { what: 'an Error whose message, name and stack getters throw', value: errorWithThrowingGetters, lastError: '(unreadable): (unreadable)' },
  { what: 'a Proxy that throws on every trap', value: () => proxyThatThrowsOnEverything(), lastError: '(unreadable)' },
  { what: 'a Proxy of an Error that throws on every trap', value: () => proxyThatThrowsOnEverything(new Error('inside')), lastError: '(unreadable)' },
  { what: 'a Symbol', value: () => Symbol('thrown'), lastError: 'Symbol(thrown)' },
  {
    what: 'an object whose toString throws',
    value: () => ({
      toString() {
        throw new Error('no text');
      },
    }),
    lastError: '(unreadable)',
  },
  { what: 'Object.create(null)', value: () => Object.create(null) as object, lastError: '(unreadable)' },
];

const nodes: WorkerNode[] = [];
afterEach(async () => {
  for (const node of nodes.splice(0)) if (node.status !== 'stopped') void node.stop();
});

describe('a handler that throws a hostile value', () => {
  it.each(HOSTILE)('issue 19 workerfix 2: $what is recorded as a failure with a safe error text, and the worker carries on', async ({ value, lastError }) => {
    const timers = new ManualTimers();
    const memory = new MemoryJobStore({ clock: timers.clock });
    const warnings: string[] = [];
    const node = new WorkerNode({
      store: memory,
      invoker: new FunctionInvoker({
        hostile: {
          retry: { baseDelayMs: 1_000, maxDelayMs: 1_000, jitter: false },
          handle: () => {
            throw value();
          },
        },
        fine: { handle: () => undefined },
      }),
      options: { concurrency: 2, pollIntervalMs: 1_000, workerId: 'node-1' },
      logger: { log() {}, warn: (m) => warnings.push(m), error: (m) => warnings.push(m) },
      clock: timers.clock,
      timers,
      random: new SeededRandom(1n),
    });
    nodes.push(node);
    const { id } = await memory.jobEnqueue({ job: { name: 'hostile', payload: {}, maxAttempts: 3 } });
    await node.start();
    await settle();
    expect(await memory.jobGet({ jobId: id })).toMatchObject({ state: 'scheduled', attempt: 1, lastError });
    expect(node.stats).toMatchObject({ failed: 1, forfeitedOutcomes: 0 });
    expect(warnings.some((line) => line.startsWith(`hostile ${id} attempt 1 of 3 failed (`))).toBe(true);
    // The node still claims, runs and records.
    const next = await memory.jobEnqueue({ job: { name: 'fine', payload: {} } });
    await timers.advance(1_000);
    expect(await memory.jobGet({ jobId: next.id })).toMatchObject({ state: 'succeeded' });
  });

  it.each(HOSTILE)('issue 19 workerfix 2: the log and stored forms of $what never throw', ({ value }) => {
    const thrown = value();
    for (const detail of ['class', 'message', 'stack'] as ErrorLogDetail[]) expect(typeof describeError(thrown, detail)).toBe('string');
    expect(typeof errorText(thrown)).toBe('string');
    expect(typeof errorDetail(thrown)).toBe('string');
  });
});
