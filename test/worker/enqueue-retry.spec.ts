import { afterEach, describe, expect, it } from '@jest/globals';
import { SeededRandom } from '../../lib/core/index.js';
import { MemoryJobStore } from '../../lib/store/index.js';
import { FunctionInvoker, WorkerNode } from '../../lib/worker/index.js';
import { ManualTimers, settle } from '../support/manual-timers.js';

const nodes: WorkerNode[] = [];
afterEach(async () => {
  for (const node of nodes.splice(0)) if (node.status !== 'stopped') void node.stop();
});

/** A worker whose handler's own policy waits a minute before the first retry (no jitter). */
function setup() {
  const timers = new ManualTimers();
  const store = new MemoryJobStore({ clock: timers.clock });
  const calls = new Map<number, number>();
  const node = new WorkerNode({
    store,
    invoker: new FunctionInvoker({
      flaky: {
        retry: { baseDelayMs: 30_000, maxDelayMs: 600_000, jitter: false },
        handle: (payload: { n: number }) => {
          const seen = (calls.get(payload.n) ?? 0) + 1;
          calls.set(payload.n, seen);
          if (seen < 3) throw new Error(`flaky ${seen}`);
        },
      },
    }),
    options: { concurrency: 4, pollIntervalMs: 1_000, heartbeatIntervalMs: 10_000, leaseMs: 30_000, workerId: 'node-1' },
    clock: timers.clock,
    timers,
    random: new SeededRandom(1n),
  });
  nodes.push(node);
  return { timers, store, node, calls };
}

describe('issue 19 item 10: the retry policy set at enqueue wins over the handler', () => {
  it('a job enqueued with retry { baseDelayMs: 0 } retries at the next poll; the handler default waits a minute', async () => {
    const { timers, store, node, calls } = setup();
    const fast = await store.jobEnqueue({ job: { name: 'flaky', payload: { n: 1 }, maxAttempts: 5, retry: { baseDelayMs: 0 } } });
    const slow = await store.jobEnqueue({ job: { name: 'flaky', payload: { n: 2 }, maxAttempts: 5 } });
    await node.start();
    await settle();
    expect([calls.get(1), calls.get(2)]).toEqual([1, 1]);
    const failedAt = timers.clock.now();
    // Retry delay 0: due again at once, so two polls see the second and third attempts.
    expect((await store.jobGet({ jobId: fast.id }))!.runAt.getTime()).toBe(failedAt);
    await timers.advance(2_000);
    expect(calls.get(1)).toBe(3);
    expect(await store.jobGet({ jobId: fast.id })).toMatchObject({ state: 'succeeded', attempt: 3 });
    // The job without an override follows the handler: base 30 s doubled once after attempt 1.
    expect((await store.jobGet({ jobId: slow.id }))!.runAt.getTime()).toBe(failedAt + 60_000);
    expect(calls.get(2)).toBe(1);
    await timers.advance(57_000);
    expect(calls.get(2)).toBe(1);
    await timers.advance(1_000);
    expect(calls.get(2)).toBe(2);
  });

  it('fields left out of the override come from the handler: a cap alone shortens the wait', async () => {
    const { store, node } = setup();
    const capped = await store.jobEnqueue({ job: { name: 'flaky', payload: { n: 3 }, maxAttempts: 5, retry: { maxDelayMs: 5_000 } } });
    await node.start();
    await settle();
    const job = (await store.jobGet({ jobId: capped.id }))!;
    // min(30 s * 2, 5 s) with the handler's jitter (off): 5 s.
    expect(job.runAt.getTime() - job.updatedAt.getTime()).toBe(5_000);
    expect(job.retry).toEqual({ maxDelayMs: 5_000 });
  });
});
