import { afterEach, describe, expect, it } from '@jest/globals';
import { InvalidArgumentError, SeededRandom } from '../../lib/core/index.js';
import { MemoryJobStore, type AttemptTransaction, type JobStore, type OutcomeResult } from '../../lib/store/index.js';
import { Completer, FunctionInvoker, WorkerNode } from '../../lib/worker/index.js';
import { ManualTimers, settle } from '../support/manual-timers.js';

/** Text a failed outcome write's error quotes (an output, a handler's error) and that `class` keeps out of the log. */
const SECRET = 'SECRET-9d41-from-the-output';

function capture() {
  const lines: string[] = [];
  return { lines, logger: { log: (m: string) => void lines.push(m), warn: (m: string) => void lines.push(m), error: (m: string) => void lines.push(m) } };
}

const nodes: WorkerNode[] = [];
afterEach(async () => {
  for (const node of nodes.splice(0)) if (node.status !== 'stopped') void node.stop();
});

describe('errorLogDetail governs the outcome-write log lines too', () => {
  it.each([
    ['refused', () => new InvalidArgumentError(`output key "${SECRET}" is refused.`, 'output')],
    ['failed', () => new Error(`could not write "${SECRET}"`)],
  ])('issue 19 workerfix 6: a %s outcome write logs only the class under errorLogDetail class', async (_what, error) => {
    const timers = new ManualTimers();
    const { lines, logger } = capture();
    const store = { jobCompleteMany: () => Promise.reject(error()) } as unknown as JobStore;
    const completer = new Completer({ store, workerId: 'w1', logger, timers, stillHeld: () => true, onSettled: () => undefined, errorLogDetail: 'class' });
    completer.submit({ jobId: 'a', attempt: 1, kind: 'succeeded', output: { [SECRET]: 1 } });
    await settle();
    completer.close();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/ \((InvalidArgumentError|Error)\); /);
    expect(lines.join('\n')).not.toContain(SECRET);
  });

  it('issue 19 workerfix 6: a success write in the attempt transaction that fails logs only the class under errorLogDetail class', async () => {
    const timers = new ManualTimers();
    const memory = new MemoryJobStore({ clock: timers.clock });
    const transaction: AttemptTransaction = {
      manager: undefined as never,
      opened: true,
      run: (work) => work(),
      commitSuccess: (): Promise<OutcomeResult> => Promise.reject(new Error(`could not write "${SECRET}"`)),
      rollback: () => Promise.resolve(),
    };
    // The in-memory store with an attempt transaction whose success write fails.
    const store = new Proxy(memory, {
      get(target, prop, receiver) {
        if (prop === 'capabilities') return { ...target.capabilities, attemptTransactions: true };
        if (prop === 'beginAttempt') return () => transaction;
        const value = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const { lines, logger } = capture();
    const node = new WorkerNode({
      store,
      invoker: new FunctionInvoker({ tx: { transaction: true, handle: (_p: unknown, ctx) => ctx.setOutput({ note: 'ok' }) } }),
      options: { concurrency: 1, pollIntervalMs: 1_000, workerId: 'node-1', errorLogDetail: 'class' },
      logger,
      clock: timers.clock,
      timers,
      random: new SeededRandom(1n),
    });
    nodes.push(node);
    const { id } = await memory.jobEnqueue({ job: { name: 'tx', payload: {} } });
    await node.start();
    await settle();
    expect(lines).toContain(`recording tx ${id} attempt 1 failed (Error).`);
    expect(lines.join('\n')).not.toContain(SECRET);
  });
});
