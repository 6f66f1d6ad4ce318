import { afterEach, beforeEach } from '@jest/globals';
import { context, metrics, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { MeterProvider, MetricReader, type DataPoint, type Histogram, type MetricData } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { ManualClock, SeededRandom } from '../../lib/core/index.js';
import { MemoryJobStore, type JobStore } from '../../lib/store/index.js';
import { SchedulerTelemetry, type SchedulerTelemetryOptions } from '../../lib/telemetry/index.js';
import { FunctionInvoker, WorkerNode, type ErrorLogDetail, type FunctionHandler, type SchedulerLogger } from '../../lib/worker/index.js';
import { ManualTimers } from '../support/manual-timers.js';

/** A reader a test collects from when it wants, nothing on a timer. */
class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

/** Registers an SDK whose spans and metrics stay in memory; `off()` unregisters it. */
export function registerSdk() {
  const exporter = new InMemorySpanExporter();
  const reader = new TestReader();
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  return {
    spans: (): ReadableSpan[] => exporter.getFinishedSpans(),
    /** Every metric collected now, by name. */
    async metrics(): Promise<Map<string, MetricData>> {
      const { resourceMetrics } = await reader.collect();
      return new Map(resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).map((metric) => [metric.descriptor.name, metric]));
    },
    off() {
      trace.disable();
      metrics.disable();
      context.disable();
      propagation.disable();
    },
  };
}

type Sdk = ReturnType<typeof registerSdk>;
/** Nodes the tests built, stopped after each test. */
const built: WorkerNode[] = [];

/** An in-memory SDK registered before each test of the file and removed after it, with the test's nodes stopped. */
export function useSdk(): Sdk {
  let current: Sdk | undefined;
  beforeEach(() => {
    current = registerSdk();
  });
  afterEach(() => {
    for (const node of built.splice(0)) if (node.status !== 'stopped') void node.stop();
    current?.off();
  });
  return { spans: () => current!.spans(), metrics: () => current!.metrics(), off: () => current!.off() };
}

/** The sum of a counter's points whose attributes include `where`. */
export function total(metric: MetricData | undefined, where: Record<string, unknown> = {}): number {
  if (!metric) return 0;
  return (metric.dataPoints as DataPoint<number>[])
    .filter((point) => Object.entries(where).every(([key, value]) => point.attributes[key] === value))
    .reduce((sum, point) => sum + point.value, 0);
}

/** A histogram's sample count and sum over points whose attributes include `where`. */
export function samples(metric: MetricData | undefined, where: Record<string, unknown> = {}): { count: number; sum: number } {
  if (!metric) return { count: 0, sum: 0 };
  return (metric.dataPoints as DataPoint<Histogram>[])
    .filter((point) => Object.entries(where).every(([key, value]) => point.attributes[key] === value))
    .reduce((acc, point) => ({ count: acc.count + point.value.count, sum: acc.sum + (point.value.sum ?? 0) }), { count: 0, sum: 0 });
}

/** A worker node on a memory store and manual time, reported by a SchedulerTelemetry. */
export function telemetryNode(
  handlers: Record<string, FunctionHandler<never>>,
  options: { telemetry?: SchedulerTelemetryOptions; storeClock?: ManualClock; store?: (memory: MemoryJobStore) => JobStore; logger?: SchedulerLogger; errorLogDetail?: ErrorLogDetail; workerId?: string } = {},
) {
  const timers = new ManualTimers();
  const memory = new MemoryJobStore({ clock: options.storeClock ?? timers.clock });
  const store = options.store ? options.store(memory) : memory;
  const logger = options.logger ?? { log() {}, warn() {}, error() {} };
  // Null without an SDK (or with everything off): the node then runs without any telemetry.
  const telemetry = SchedulerTelemetry.create(options.telemetry, { store, logger, errorLogDetail: options.errorLogDetail ?? 'message', clock: timers.clock });
  const node = new WorkerNode({
    store,
    invoker: new FunctionInvoker(handlers),
    options: { concurrency: 2, pollIntervalMs: 1_000, heartbeatIntervalMs: 10_000, leaseMs: 30_000, workerId: options.workerId ?? 'node-1', queues: ['default', 'mail'], errorLogDetail: options.errorLogDetail ?? 'message' },
    clock: timers.clock,
    timers,
    random: new SeededRandom(3n),
    logger,
    attemptHooks: telemetry?.attemptHook ? [telemetry.attemptHook] : [],
  });
  const detach = telemetry?.attach(node) ?? (() => {});
  built.push(node);
  /** Enqueues as the Nest client does: inside a `send` span, storing its context with the job. */
  const enqueue = (name: string, payload: unknown, extra: Record<string, unknown> = {}) =>
    telemetry === null
      ? memory.jobEnqueue({ job: { name, payload, ...extra } })
      : telemetry.send({ queues: new Map([[(extra.queue as string) ?? 'default', 1]]), name }, (traceContext) => memory.jobEnqueue({ job: { name, payload, ...extra, ...(traceContext ? { traceContext } : {}) } }), (r) => r.id);
  return { timers, memory, node, telemetry, enqueue, detach };
}
