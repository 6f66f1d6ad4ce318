import { describe, expect, it } from '@jest/globals';
import { ManualClock } from '../../lib/core/index.js';
import { GAUGE_TASK, TELEMETRY_METRICS as M } from '../../lib/telemetry/index.js';
import { PermanentJobError, type FunctionHandler } from '../../lib/worker/index.js';
import { settle } from '../support/manual-timers.js';
import { samples, telemetryNode, total, useSdk } from './otel-harness.js';

const sdk = useSdk();

const mail = { 'messaging.destination.name': 'mail', 'durable_scheduler.job.name': 'mail.send' };

describe('metrics', () => {
  it('count a known workload: sent, started, succeeded, retried, dead-lettered, with durations and waits', async () => {
    let flaky = 0;
    const handlers: Record<string, FunctionHandler<never>> = {
      'mail.send': {
        handle: async (payload: never) => {
          const kind = (payload as { kind: string }).kind;
          if (kind === 'flaky' && (flaky += 1) === 1) throw new Error('smtp busy');
          if (kind === 'doomed') throw new PermanentJobError('no such mailbox');
        },
      },
    };
    const { node, enqueue, timers, memory } = telemetryNode(handlers);
    for (const kind of ['ok', 'flaky', 'doomed']) await enqueue('mail.send', { kind }, { queue: 'mail', retry: { baseDelayMs: 1_000, jitter: false } });
    await timers.advance(3_000); // each waits 3 s before a node runs
    await node.start();
    await settle();
    await timers.advance(2_000); // the retry of the flaky one, due 1 s after its failure
    await settle();

    const first = await sdk.metrics();
    expect(total(first.get(M.sent), { 'messaging.destination.name': 'mail' })).toBe(3);
    expect(total(first.get(M.consumed), mail)).toBe(4);
    expect(total(first.get(M.succeeded), mail)).toBe(2);
    expect(total(first.get(M.retried), mail)).toBe(1);
    expect(total(first.get(M.deadLettered), mail)).toBe(1);
    expect(total(first.get(M.staleOutcomes))).toBe(0);
    expect(samples(first.get(M.processDuration), mail).count).toBe(4);
    const waits = samples(first.get(M.waitDuration), mail);
    expect(waits.count).toBe(4);
    // Three first attempts waited 3 s each; the retry waits for the next poll, at most 1 s.
    expect(waits.sum).toBeGreaterThanOrEqual(9);
    expect(waits.sum).toBeLessThanOrEqual(10);
    expect(first.get(M.processDuration)!.descriptor.unit).toBe('s');

    // The gauges: one job running on this node; the cluster's dead letters and due jobs per queue.
    const stopped = node.stop();
    await timers.advance(15_000); // past the gauges' interval: the next collection reads the store again
    await stopped;
    await memory.jobEnqueue({ job: { name: 'mail.send', payload: { kind: 'ok' }, queue: 'mail' } });
    await memory.jobEnqueue({ job: { name: 'mail.send', payload: { kind: 'ok' }, queue: 'later' } });
    const gauges = await sdk.metrics();
    expect(total(gauges.get(M.deadLetterCount), { 'messaging.destination.name': 'mail' })).toBe(1);
    expect(total(gauges.get(M.due), { 'messaging.destination.name': 'mail' })).toBe(1);
    expect(total(gauges.get(M.due), { 'messaging.destination.name': 'later' })).toBe(1);
    expect(total(gauges.get(M.running))).toBe(0);
  });

  it('issue 39 item 5: count a snooze as snoozed, not as a retry', async () => {
    const handlers: Record<string, FunctionHandler<never>> = {
      'mail.send': { handle: (_payload: never, ctx) => (ctx.snoozes === 0 ? ctx.snooze(1_000) : undefined) },
    };
    const { node, enqueue, timers } = telemetryNode(handlers);
    await enqueue('mail.send', { kind: 'later' }, { queue: 'mail' });
    await node.start();
    await settle();
    await timers.advance(2_000); // past the snooze, and the next poll
    await settle();
    const metrics = await sdk.metrics();
    expect(total(metrics.get(M.snoozed), mail)).toBe(1);
    expect(total(metrics.get(M.retried), mail)).toBe(0);
    expect(total(metrics.get(M.succeeded), mail)).toBe(1);
    expect(total(metrics.get(M.consumed), mail)).toBe(2);
    expect(node.stats).toMatchObject({ snoozed: 1, failed: 0, succeeded: 1 });
    await node.stop();
  });

  it('report the running attempts of this node, and the oldest due job’s age', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const { node, timers, memory } = telemetryNode({ slow: { handle: () => held }, other: { handle: async () => {} } }, { telemetry: { gaugeIntervalMs: 1_000 } });
    await memory.jobEnqueue({ job: { name: 'slow', payload: 1 } });
    await node.start();
    await settle();
    await memory.jobEnqueue({ job: { name: 'other', payload: 1, queue: 'idle' } });
    await timers.advance(90_000);
    const read = await sdk.metrics();
    expect(total(read.get(M.running))).toBe(1);
    expect(total(read.get(M.oldestDueAge), { 'messaging.destination.name': 'idle' })).toBe(90);
    release();
  });

  it('count a stale outcome and a lost lease', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const storeClock = new ManualClock();
    const { node, enqueue, timers } = telemetryNode({ slow: { handle: () => held } }, { storeClock });
    await enqueue('slow', 1);
    await node.start();
    await settle();
    storeClock.advance(31_000);
    await timers.advance(400);
    release();
    await settle();
    const read = await sdk.metrics();
    expect(total(read.get(M.staleOutcomes), { 'durable_scheduler.job.name': 'slow' })).toBe(1);
    expect(total(read.get(M.succeeded))).toBe(0);
  });

  it('read the cluster gauges on one node at a time, and a node that lost the lease reports 0 for what it reported', async () => {
    const { memory, timers } = telemetryNode({}, { telemetry: { gaugeIntervalMs: 1_000 } });
    // Another node holds the lease: this one reports no cluster gauge.
    expect(await memory.maintenanceLease({ task: GAUGE_TASK, workerId: 'other-node', leaseMs: 5_000 })).toBe(true);
    await memory.jobEnqueue({ job: { name: 'x', payload: 1, queue: 'idle' } });
    expect((await sdk.metrics()).get(M.due)?.dataPoints ?? []).toEqual([]);
    // The other node's lease lapses: this node takes it over and reads the store.
    await timers.advance(6_000);
    expect(total((await sdk.metrics()).get(M.due), { 'messaging.destination.name': 'idle' })).toBe(1);
    // The other node takes the lease back: this one reports 0 for the queue, never its stale 1.
    await timers.advance(3_000);
    expect(await memory.maintenanceLease({ task: GAUGE_TASK, workerId: 'other-node', leaseMs: 60_000 })).toBe(true);
    await timers.advance(1_000);
    expect(total((await sdk.metrics()).get(M.due), { 'messaging.destination.name': 'idle' })).toBe(0);
  });

  it('stop reading the store once detached, as the module does at shutdown', async () => {
    const reads: string[] = [];
    const { memory, detach, timers } = telemetryNode(
      {},
      {
        telemetry: { gaugeIntervalMs: 1_000 },
        store: (store) =>
          new Proxy(store, {
            get(target, prop, receiver) {
              if (prop === 'queueList' || prop === 'queueOldestDue' || prop === 'maintenanceLease') reads.push(prop);
              const value = Reflect.get(target, prop, receiver);
              return typeof value === 'function' ? value.bind(target) : value;
            },
          }),
      },
    );
    await memory.jobEnqueue({ job: { name: 'x', payload: 1, queue: 'idle' } });
    expect(total((await sdk.metrics()).get(M.due), { 'messaging.destination.name': 'idle' })).toBe(1);
    expect(reads.length).toBeGreaterThan(0);
    detach();
    reads.length = 0;
    await timers.advance(5_000);
    await sdk.metrics();
    expect(reads).toEqual([]);
  });
});
