import { describe, expect, it } from '@jest/globals';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ManualClock } from '../../lib/core/index.js';
import { currentTraceContext, LEASE_LOST_EVENT, STALE_OUTCOME_EVENT } from '../../lib/telemetry/index.js';
import { PermanentJobError, type FunctionHandler } from '../../lib/worker/index.js';
import { settle } from '../support/manual-timers.js';
import { useSdk, telemetryNode } from './otel-harness.js';

const SECRET = { card: '4111-1111-1111-1111' };

const sdk = useSdk();
const exporter = new InMemorySpanExporter();

function blocking() {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  return { handler: { handle: async () => released } as FunctionHandler<never>, release };
}

describe('tracing', () => {
  it('makes one trace of the request, its send span and a process span per attempt, each attempt a child of the send', async () => {
    let calls = 0;
    const { node, enqueue, timers } = telemetryNode({
      'card.charge': {
        handle: async () => {
          // The handler runs inside its attempt's span: its own spans are that span's children.
          trace.getTracer('app').startSpan('charge the card').end();
          calls += 1;
          if (calls === 1) throw new TypeError('the bank timed out');
        },
      },
    });
    const { id } = await trace.getTracer('app').startActiveSpan('POST /charges', { kind: SpanKind.SERVER }, async (request) => {
      const result = await enqueue('card.charge', SECRET, { retry: { baseDelayMs: 1_000, jitter: false } });
      request.end();
      return result;
    });
    await node.start();
    await settle();
    await timers.advance(2_000);
    await settle();

    const spans = sdk.spans();
    const send = spans.find((s) => s.name === 'send default')!;
    const processes = spans.filter((s) => s.name === 'process default');
    const inner = spans.filter((s) => s.name === 'charge the card');
    expect(send.kind).toBe(SpanKind.PRODUCER);
    expect(send.parentSpanContext?.spanId).toBe(spans.find((s) => s.name === 'POST /charges')!.spanContext().spanId);
    expect(send.attributes).toMatchObject({
      'messaging.system': 'durable_scheduler',
      'messaging.operation.type': 'send',
      'messaging.destination.name': 'default',
      'messaging.message.id': id,
      'durable_scheduler.job.name': 'card.charge',
    });
    expect(processes).toHaveLength(2);
    for (const [i, span] of processes.entries()) {
      expect(span.kind).toBe(SpanKind.CONSUMER);
      expect(span.spanContext().traceId).toBe(send.spanContext().traceId);
      expect(span.parentSpanContext?.spanId).toBe(send.spanContext().spanId);
      expect(span.attributes).toMatchObject({ 'messaging.operation.type': 'process', 'messaging.message.id': id, 'durable_scheduler.job.attempt': i + 1, 'durable_scheduler.outcome': 'applied' });
      expect(inner[i]!.parentSpanContext?.spanId).toBe(span.spanContext().spanId);
    }
    expect(processes[0]!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'TypeError: the bank timed out' });
    expect(processes[0]!.attributes).toMatchObject({ 'error.type': 'TypeError', 'durable_scheduler.job.state': 'scheduled', 'durable_scheduler.outcome.kind': 'failed' });
    expect(processes[1]!.status.code).toBe(SpanStatusCode.UNSET);
    expect(processes[1]!.attributes).toMatchObject({ 'durable_scheduler.job.state': 'succeeded' });
    expect(processes[1]!.attributes['error.type']).toBeUndefined();
    // The occurrence id is the job's dedupe key, the same on both attempts.
    expect(processes[0]!.attributes['durable_scheduler.job.occurrence_id']).toBe(processes[1]!.attributes['durable_scheduler.job.occurrence_id']);
    expect(JSON.stringify(spans.map((s) => [s.attributes, s.events, s.status]))).not.toContain(SECRET.card);
  });

  it('records a stale outcome on the attempt’s span: the fence refused it', async () => {
    const b = blocking();
    const storeClock = new ManualClock();
    const { node, enqueue, timers } = telemetryNode({ slow: b.handler }, { storeClock });
    await enqueue('slow', 1);
    await node.start();
    await settle();
    storeClock.advance(31_000); // the store's lease lapses; the node does not know yet
    await timers.advance(400);
    b.release();
    await settle();
    const span = sdk.spans().find((s) => s.name === 'process default')!;
    expect(span.attributes['durable_scheduler.outcome']).toBe('stale');
    expect(span.events.map((e) => e.name)).toEqual([STALE_OUTCOME_EVENT]);
  });

  it('marks a lost lease on the span, and the outcome the node then drops', async () => {
    const b = blocking();
    let cutOff = false;
    const { node, enqueue, timers } = telemetryNode(
      { isolated: b.handler },
      {
        store: (memory) =>
          new Proxy(memory, {
            get(target, prop, receiver) {
              if (prop === 'jobHeartbeat') return (params: never) => (cutOff ? Promise.reject(new Error('network down')) : target.jobHeartbeat(params));
              const value = Reflect.get(target, prop, receiver);
              return typeof value === 'function' ? value.bind(target) : value;
            },
          }),
      },
    );
    await enqueue('isolated', 1);
    await node.start();
    await settle();
    cutOff = true;
    await timers.advance(30_000);
    b.release();
    await settle();
    const span = sdk.spans().find((s) => s.name === 'process default')!;
    expect(span.events.map((e) => [e.name, e.attributes])).toEqual([[LEASE_LOST_EVENT, { 'durable_scheduler.lease.reason': 'lease_expired' }]]);
    expect(span.attributes['durable_scheduler.outcome']).toBe('dropped');
  });

  it('marks a dead-lettering attempt as an error; its status carries what the log line would, the class alone under errorLogDetail "class"', async () => {
    const doomed = { handle: () => Promise.reject(new PermanentJobError('the card was refused for good')) };
    for (const [errorLogDetail, message] of [
      ['message', 'PermanentJobError: the card was refused for good'],
      ['class', 'PermanentJobError'],
    ] as const) {
      const { node, enqueue } = telemetryNode({ doomed }, { errorLogDetail });
      const { id } = await enqueue('doomed', SECRET);
      await node.start();
      await settle();
      const span = sdk.spans().find((s) => s.name === 'process default' && s.attributes['messaging.message.id'] === id)!;
      expect(span.attributes).toMatchObject({ 'error.type': 'PermanentJobError', 'durable_scheduler.job.state': 'dead_lettered' });
      expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message });
      expect(JSON.stringify([span.attributes, span.events, span.status])).not.toContain(SECRET.card);
    }
  });

  it('issue 39 item 5: leaves a snoozed attempt unmarked: a snooze is no failure', async () => {
    const { node, enqueue } = telemetryNode({ waiting: { handle: (_payload, ctx) => ctx.snooze(60_000) } });
    const { id } = await enqueue('waiting', 1);
    await node.start();
    await settle();
    const span = sdk.spans().find((s) => s.name === 'process default' && s.attributes['messaging.message.id'] === id)!;
    expect(span.attributes).toMatchObject({ 'durable_scheduler.outcome.kind': 'snoozed', 'durable_scheduler.job.state': 'scheduled' });
    expect(span.attributes['error.type']).toBeUndefined();
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('marks an attempt that timed out as an error of class JobTimeoutError, though its handler never returned', async () => {
    const { node, enqueue, timers } = telemetryNode({ stuck: { handle: () => new Promise<void>(() => {}), timeoutMs: 5_000 } });
    await enqueue('stuck', 1);
    await node.start();
    await settle();
    await timers.advance(5_000);
    await settle();
    const span = sdk.spans().find((s) => s.name === 'process default')!;
    expect(span.attributes).toMatchObject({ 'error.type': 'JobTimeoutError', 'durable_scheduler.outcome.kind': 'failed', 'durable_scheduler.job.state': 'scheduled' });
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'JobTimeoutError' });
  });

  it('runs a sampled-out attempt’s handler under the stored context, so its own spans keep the trace and its decision', async () => {
    const unsampled = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00';
    let seen: { traceId: string; sampled: boolean } | undefined;
    const { node, memory } = telemetryNode({
      quiet: {
        handle: async () => {
          const inner = trace.getTracer('app').startSpan('inside');
          seen = { traceId: inner.spanContext().traceId, sampled: inner.isRecording() };
          inner.end();
        },
      },
    });
    await memory.jobEnqueue({ job: { name: 'quiet', payload: 1, traceContext: { traceparent: unsampled } } });
    await node.start();
    await settle();
    expect(seen).toEqual({ traceId: '0af7651916cd43dd8448eb211c80319c', sampled: false });
    expect(sdk.spans()).toEqual([]);
  });

  it("links a dependant's span to the enqueue of each parent that was traced", async () => {
    const { node, enqueue, memory } = telemetryNode({ step: { handle: async () => {} } });
    const inRequest = (name: string, payload: number) =>
      trace.getTracer('app').startActiveSpan(name, async (request) => {
        const { id } = await enqueue('step', payload);
        request.end();
        return id;
      });
    const first = await inRequest('POST /first', 1);
    const second = await inRequest('POST /second', 2);
    const untraced = (await memory.jobEnqueue({ job: { name: 'step', payload: 3 } })).id;
    const { id: child } = await enqueue('step', 4, { dependsOn: [first, second, untraced] });
    await node.start();
    await settle();
    await settle();
    const spans = sdk.spans();
    const sendOf = (id: string) => spans.find((s) => s.name === 'send default' && s.attributes['messaging.message.id'] === id)!;
    const childSpan = spans.find((s) => s.name === 'process default' && s.attributes['messaging.message.id'] === child)!;
    expect(childSpan.links.map((l) => [l.context.spanId, l.attributes])).toEqual(
      [first, second]
        .sort()
        .map((id) => [sendOf(id).spanContext().spanId, { 'durable_scheduler.link.kind': 'parent', 'messaging.message.id': id, 'durable_scheduler.job.name': 'step' }]),
    );
    // Jobs without parents read nothing for links.
    expect(spans.find((s) => s.name === 'process default' && s.attributes['messaging.message.id'] === first)!.links).toEqual([]);
  });

  it('links a minted occurrence’s span to the span that set its schedule up', async () => {
    const { node, memory, timers } = telemetryNode({ tick: { handle: async () => {} } });
    const { schedule, setup } = await trace.getTracer('app').startActiveSpan('PUT /schedules/tick', async (span) => {
      const result = await memory.scheduleUpsert({ schedule: { name: 'tick', everyMs: 60_000, traceContext: currentTraceContext() } });
      span.end();
      return { schedule: result.schedule, setup: span.spanContext() };
    });
    await node.start();
    await timers.advance(61_000);
    await settle();
    const occurrence = sdk.spans().find((s) => s.name === 'process default')!;
    expect(occurrence.attributes['durable_scheduler.schedule.id']).toBe(schedule.id);
    // Its own trace (no producer enqueued it), linked to the schedule's setup.
    expect(occurrence.spanContext().traceId).not.toBe(setup.traceId);
    expect(occurrence.links.map((l) => [l.context.traceId, l.context.spanId, l.attributes])).toEqual([
      [setup.traceId, setup.spanId, { 'durable_scheduler.link.kind': 'schedule', 'durable_scheduler.schedule.id': schedule.id }],
    ]);
  });

  it('with telemetry.tracing false, stores no context and makes no span', async () => {
    const { node, enqueue, memory } = telemetryNode({ quiet: { handle: async () => {} } }, { telemetry: { tracing: false } });
    const parent = trace.getTracer('app').startSpan('outer');
    const { id } = await enqueue('quiet', 1);
    parent.end();
    await node.start();
    await settle();
    expect((await memory.jobGet({ jobId: id }))!.traceContext).toBeNull();
    expect(sdk.spans().map((s) => s.name)).toEqual(['outer']);
  });

  it('with only a tracer provider registered, traces and keeps metrics off', async () => {
    sdk.off();
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
    const { node, enqueue, telemetry } = telemetryNode({ plain: { handle: async () => {} } });
    await enqueue('plain', 1);
    await node.start();
    await settle();
    expect(telemetry).not.toBeNull();
    expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual(['send default', 'process default']);
    expect(node.events.listenerCount('attemptStarted')).toBe(0); // the metrics' only listener
  });

  it('without an SDK, stores no context and the attempt runs as it would without telemetry', async () => {
    sdk.off();
    let ran = 0;
    const { node, enqueue, memory, telemetry } = telemetryNode({ plain: { handle: async () => void (ran += 1) } });
    // No SDK when the node is built: no telemetry at all, so no hook or listener costs the drain anything.
    expect(telemetry).toBeNull();
    expect(node.events.listenerCount('settled')).toBe(0);
    const { id } = await enqueue('plain', 1);
    await node.start();
    await settle();
    expect((await memory.jobGet({ jobId: id }))).toMatchObject({ state: 'succeeded', traceContext: null });
    expect(ran).toBe(1);
    expect(sdk.spans()).toEqual([]);
  });
});
