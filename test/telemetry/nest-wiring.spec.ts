import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { trace } from '@opentelemetry/api';
import { InvalidArgumentError, Job, SchedulerClient, SchedulerModule, SchedulerOrchestrator, TELEMETRY_METRICS, type JobHandler, type SchedulerModuleOptions } from '../../lib/index.js';
import { MemoryJobStore, SystemClock } from '../../lib/testing/index.js';
import { settled } from '../nest/support.js';
import { registerSdk, total } from './otel-harness.js';

@Job('wired.job')
class Wired implements JobHandler {
  async handle() {
    trace.getTracer('app').startSpan('inside the handler').end();
  }
}

let sdk: ReturnType<typeof registerSdk>;
let app: INestApplicationContext | undefined;
beforeEach(() => {
  sdk = registerSdk();
});
afterEach(async () => {
  await app?.close();
  app = undefined;
  sdk.off();
});

async function boot(options: Partial<SchedulerModuleOptions> = {}) {
  const moduleRef = await Test.createTestingModule({
    imports: [SchedulerModule.forRoot({ store: new MemoryJobStore({ clock: new SystemClock() }), pollIntervalMs: 10, heartbeatIntervalMs: 1_000, leaseMs: 5_000, ...options })],
    providers: [Wired],
  }).compile();
  app = await moduleRef.init();
  return app;
}

describe('telemetry in the Nest module', () => {
  it('traces the client’s enqueue and the attempt, and stores the active context with a schedule', async () => {
    const app = await boot();
    const client = app.get(SchedulerClient);
    const { id, schedule } = await trace.getTracer('app').startActiveSpan('POST /wired', async (span) => {
      const { id } = await client.enqueue('wired.job', {});
      const schedule = await client.schedule({ name: 'wired.job', everyMs: 3_600_000 });
      span.end();
      return { id, schedule };
    });
    await settled(app, id);
    const spans = sdk.spans();
    const send = spans.find((s) => s.name === 'send default')!;
    const processed = spans.find((s) => s.name === 'process default')!;
    expect(processed.parentSpanContext?.spanId).toBe(send.spanContext().spanId);
    expect(spans.find((s) => s.name === 'inside the handler')!.parentSpanContext?.spanId).toBe(processed.spanContext().spanId);
    expect((await client.get(id))!.traceContext?.traceparent).toContain(send.spanContext().spanId);
    expect(schedule.traceContext?.traceparent).toContain(spans.find((s) => s.name === 'POST /wired')!.spanContext().spanId);
    expect(app.get(SchedulerOrchestrator).telemetry).not.toBeNull();
  });

  it('gives an enqueueMany one send span for the call, and counts its jobs per queue', async () => {
    const app = await boot({ autoStart: false });
    await app.get(SchedulerClient).enqueueMany([
      { name: 'wired.job', payload: {} },
      { name: 'wired.job', payload: {}, queue: 'other' },
      { name: 'wired.job', payload: {}, queue: 'other' },
    ]);
    const sends = sdk.spans().filter((s) => s.name.startsWith('send'));
    expect(sends.map((s) => [s.name, s.attributes['messaging.batch.message_count'], s.attributes['messaging.destination.name']])).toEqual([['send', 3, undefined]]);
    const sent = (await sdk.metrics()).get(TELEMETRY_METRICS.sent);
    expect(total(sent, { 'messaging.destination.name': 'default' })).toBe(1);
    expect(total(sent, { 'messaging.destination.name': 'other' })).toBe(2);
  });

  it('with telemetry: false, stores no context and makes no span of its own', async () => {
    const app = await boot({ telemetry: false });
    const { id } = await trace.getTracer('app').startActiveSpan('POST /quiet', async (span) => {
      const result = await app.get(SchedulerClient).enqueue('wired.job', {});
      span.end();
      return result;
    });
    await settled(app, id);
    expect((await app.get(SchedulerClient).get(id))!.traceContext).toBeNull();
    expect(sdk.spans().map((s) => s.name).sort()).toEqual(['POST /quiet', 'inside the handler']);
  });

  it('refuses a bad telemetry option at boot, with one sentence', async () => {
    await expect(boot({ telemetry: { tracing: 'yes' } as never })).rejects.toThrow(new InvalidArgumentError('telemetry.tracing must be true or false, got "yes".', 'telemetry.tracing'));
    await expect(boot({ telemetry: { gaugeIntervalMs: 10 } })).rejects.toThrow('telemetry.gaugeIntervalMs must be a whole number of milliseconds from 1000 to 3600000, got 10.');
    await expect(boot({ telemetry: { sample: 1 } as never })).rejects.toThrow('telemetry.sample is not a known telemetry option; known options are tracing, metrics, gaugeIntervalMs.');
  });
});
