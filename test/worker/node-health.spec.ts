import { afterEach, describe, expect, it } from '@jest/globals';
import { SeededRandom } from '../../lib/core/index.js';
import { MemoryJobStore, type JobStore, type WakeSubscription } from '../../lib/store/index.js';
import { FunctionInvoker, WorkerNode } from '../../lib/worker/index.js';
import { ManualTimers, settle } from '../support/manual-timers.js';

const nodes: WorkerNode[] = [];
afterEach(() => {
  for (const node of nodes.splice(0)) if (node.status !== 'stopped') void node.stop();
});

/** A node whose store reports a wake connection the test sets, and whose claims can be made to fail. */
function setup() {
  const timers = new ManualTimers();
  const memory = new MemoryJobStore({ clock: timers.clock });
  const wake: { connection: WakeSubscription['connection'] } = { connection: 'connecting' };
  let claimsFail = false;
  const store = new Proxy(memory, {
    get(target, prop, receiver) {
      if (prop === 'subscribeWakeHints') {
        return async () => ({
          close: async () => {},
          get connection() {
            return wake.connection;
          },
        });
      }
      if (prop === 'jobClaim') return (params: never) => (claimsFail ? Promise.reject(new Error('database gone')) : target.jobClaim(params));
      const value = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as JobStore;
  const node = new WorkerNode({
    store,
    invoker: new FunctionInvoker({}),
    options: { pollIntervalMs: 1_000, heartbeatIntervalMs: 10_000, workerId: 'node-h' },
    clock: timers.clock,
    timers,
    random: new SeededRandom(1n),
  });
  nodes.push(node);
  return { node, timers, wake, failClaims: () => (claimsFail = true) };
}

describe('WorkerNode.health()', () => {
  it('says idle and none before the start, then running with its start and its last contact', async () => {
    const { node, timers } = setup();
    expect(node.health()).toEqual({ status: 'idle', lastContactAt: null, startedAt: null, wakeListener: 'none', inFlight: 0 });
    const started = timers.clock.now();
    await node.start();
    await settle();
    expect(node.health()).toMatchObject({ status: 'running', startedAt: new Date(started), lastContactAt: new Date(started), inFlight: 0 });
    await timers.advance(3_000);
    expect(node.health().lastContactAt).toEqual(new Date(started + 3_000)); // the polls' claims
  });

  it('keeps the last good contact when claims fail, so a health check sees it age', async () => {
    const { node, timers, failClaims } = setup();
    await node.start();
    await settle();
    const before = node.health().lastContactAt;
    failClaims();
    await timers.advance(5_000);
    expect(node.health().lastContactAt).toEqual(before);
  });

  it('reads the wake connection: connecting, connected, and disconnected once lost', async () => {
    const { node, wake } = setup();
    await node.start();
    expect(node.health().wakeListener).toBe('connecting');
    wake.connection = 'connected';
    expect(node.health().wakeListener).toBe('connected');
    wake.connection = 'lost';
    expect(node.health().wakeListener).toBe('disconnected');
  });
});
