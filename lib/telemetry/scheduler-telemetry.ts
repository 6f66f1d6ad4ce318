import type { ObservableCallback, ObservableGauge } from '@opentelemetry/api';
import { checkOptions, InvalidArgumentError, showValue, type Clock, type TraceContext } from '../core/index.js';
import type { JobStore } from '../store/index.js';
import { describeError, packageVersion, type AttemptHook, type ErrorLogDetail, type SchedulerLogger, type WorkerNode } from '../worker/index.js';
import { ClusterGauges } from './cluster-gauges.js';
import { JobMetrics } from './job-metrics.js';
import { JobTracing } from './job-tracing.js';
import type { SendInfo } from './send-info.js';
import { otelApi, type Otel } from './otel-api.js';
import { METRIC, SCOPE } from './semconv.js';
import { traceContextOf } from './trace-carrier.js';

/** What the scheduler reports to OpenTelemetry (the `telemetry` module option). */
export interface SchedulerTelemetryOptions {
  /** `send` and `process` spans, and the trace context stored with each job. Default true. */
  readonly tracing?: boolean;
  /** Counters, histograms and gauges. Default true. */
  readonly metrics?: boolean;
  /**
   * The shortest time between two reads of the store for the cluster gauges (due jobs, the oldest
   * due job's age, dead letters); a collection sooner reports the last read. Default 15,000 ms.
   */
  readonly gaugeIntervalMs?: number;
}

/** What the telemetry reads and logs through. */
export interface TelemetryDeps {
  readonly store: JobStore;
  readonly logger: SchedulerLogger;
  /** How much of a handler's error a span's status carries (the node's `errorLogDetail`). */
  readonly errorLogDetail: ErrorLogDetail;
  /** The clock the gauges' interval is measured on; the system clock by default. */
  readonly clock?: Clock;
}

/** Default of {@link SchedulerTelemetryOptions.gaugeIntervalMs}. */
export const DEFAULT_GAUGE_INTERVAL_MS = 15_000;

/**
 * The scheduler's OpenTelemetry: tracing through an attempt hook and the client's `send`, metrics
 * from the node's events. Built only when `@opentelemetry/api` is installed; until the host
 * registers an SDK, every span and instrument is the API's no-op.
 */
export class SchedulerTelemetry {
  private readonly tracing: JobTracing | undefined;
  private metricsOf: JobMetrics | undefined;

  private constructor(
    private readonly api: Otel,
    private readonly options: Required<SchedulerTelemetryOptions>,
    private readonly deps: TelemetryDeps,
  ) {
    this.tracing = options.tracing ? new JobTracing(api, deps.errorLogDetail, deps.store) : undefined;
  }

  /**
   * The telemetry for `options`, or null when it is off, when `@opentelemetry/api` is not
   * installed, or when no SDK is registered yet: then no hook, listener or gauge is installed at
   * all, and the node runs exactly as it would without telemetry (a no-op span per attempt
   * measurably slowed a drain). Register the SDK before the app is created. Bad options are
   * refused with an InvalidArgumentError.
   */
  static create(
    options: SchedulerTelemetryOptions | boolean | undefined,
    deps: TelemetryDeps,
  ): SchedulerTelemetry | null {
    const resolved = resolveTelemetryOptions(options);
    if (resolved === null) return null;
    const api = otelApi();
    if (api === null) return null;
    const registered = registeredSdk(api);
    const effective = { ...resolved, tracing: resolved.tracing && registered.tracing, metrics: resolved.metrics && registered.metrics };
    if (!effective.tracing && !effective.metrics) {
      deps.logger.debug?.('@opentelemetry/api is installed but no SDK was registered when the scheduler was built, so it reports no spans or metrics; register the SDK before creating the app.');
      return null;
    }
    return new SchedulerTelemetry(api, effective, deps);
  }

  /** The active span's context when tracing is on (for a schedule to store), else undefined. */
  activeTraceContext(): TraceContext | undefined {
    return this.tracing ? currentTraceContext() : undefined;
  }

  /** The hook that runs each attempt in its `process` span, when tracing is on. */
  get attemptHook(): AttemptHook | undefined {
    return this.tracing?.hook;
  }

  /**
   * Runs an enqueue: inside a `send` span whose context `write` stores with the jobs, and counted.
   * `traceContext` the caller set on the jobs wins over the span's.
   */
  async send<T>(info: SendInfo, write: (trace: TraceContext | undefined) => Promise<T>, idOf: (result: T) => string | undefined): Promise<T> {
    const metrics = this.metrics();
    try {
      const result = this.tracing ? await this.tracing.send(info, write, idOf) : await write(undefined);
      for (const [queue, count] of info.queues) metrics?.enqueued(queue, info.name, count);
      return result;
    } catch (error) {
      for (const [queue, count] of info.queues) metrics?.enqueued(queue, info.name, count, describeError(error, 'class'));
      throw error;
    }
  }

  /**
   * Reports `node`: ends attempt spans as their outcomes settle, feeds the counters and histograms,
   * and registers the running-jobs gauge and the cluster gauges. Returns the detach function.
   */
  attach(node: WorkerNode): () => void {
    const { events } = node;
    const metrics = this.metrics();
    const tracing = this.tracing;
    const started = metrics ? (e: Parameters<JobMetrics['attemptStarted']>[0]) => metrics.attemptStarted(e) : undefined;
    const settled = (e: Parameters<JobTracing['settled']>[0]) => {
      tracing?.settled(e);
      metrics?.settled(e);
    };
    const lost = (e: Parameters<JobTracing['leaseLost']>[0]) => {
      tracing?.leaseLost(e);
      metrics?.leaseLost(e);
    };
    const state = (e: { readonly to: string }) => {
      if (e.to === 'stopped') tracing?.abandonAll();
    };
    if (started) events.on('attemptStarted', started);
    events.on('settled', settled);
    events.on('leaseLost', lost);
    events.on('stateChanged', state);
    let gauges: { running: ObservableGauge; observeRunning: ObservableCallback; cluster: ClusterGauges } | undefined;
    if (metrics) {
      const running = metrics.meter.createObservableGauge(METRIC.running, { description: 'Attempts this node runs or is recording now.', unit: '{job}', valueType: this.api.ValueType.INT });
      const observeRunning: ObservableCallback = (result) => result.observe(node.inFlight);
      running.addCallback(observeRunning);
      const cluster = new ClusterGauges(this.api, metrics.meter, this.deps.store, {
        workerId: node.workerId,
        intervalMs: this.options.gaugeIntervalMs,
        logger: this.deps.logger,
        now: () => (this.deps.clock ? this.deps.clock.now() : Date.now()),
      });
      gauges = { running, observeRunning, cluster };
    }
    return () => {
      if (started) events.off('attemptStarted', started);
      events.off('settled', settled);
      events.off('leaseLost', lost);
      events.off('stateChanged', state);
      gauges?.running.removeCallback(gauges.observeRunning);
      gauges?.cluster.close();
    };
  }

  /** Built at first use, so a MeterProvider the host registers before the app starts is the one used. */
  private metrics(): JobMetrics | undefined {
    if (!this.options.metrics) return undefined;
    this.metricsOf ??= new JobMetrics(this.api, this.api.metrics.getMeter(SCOPE, packageVersion()));
    return this.metricsOf;
  }
}

/**
 * The trace context of the active span, as a job would store it: for code that writes jobs through
 * the store directly (`EnqueueInput.traceContext`). Undefined without `@opentelemetry/api`, an SDK,
 * or an active span.
 */
export function currentTraceContext(): TraceContext | undefined {
  const api = otelApi();
  const span = api?.trace.getSpan(api.context.active());
  if (!api || !span || !api.isSpanContextValid(span.spanContext())) return undefined;
  return traceContextOf(span.spanContext());
}

/**
 * Which SDK parts the host registered. The API's global tracer provider is a proxy that has a
 * delegate tracer only once an SDK is set; its meter provider is the no-op one until then.
 */
function registeredSdk(api: Otel): { readonly tracing: boolean; readonly metrics: boolean } {
  const tracerProvider = api.trace.getTracerProvider() as { getDelegateTracer?: (name: string, version?: string) => unknown };
  const tracing = typeof tracerProvider.getDelegateTracer === 'function' ? tracerProvider.getDelegateTracer(SCOPE, packageVersion()) !== undefined : true;
  const metrics = api.metrics.getMeterProvider().getMeter(SCOPE).constructor !== api.createNoopMeter().constructor;
  return { tracing, metrics };
}

function resolveTelemetryOptions(options: SchedulerTelemetryOptions | boolean | undefined): Required<SchedulerTelemetryOptions> | null {
  if (options === false) return null;
  const given = options === undefined || options === true ? {} : options;
  if (typeof given !== 'object' || given === null || Array.isArray(given)) {
    throw new InvalidArgumentError(`telemetry must be true, false or { tracing?, metrics?, gaugeIntervalMs? }, got ${showValue(given)}.`, 'telemetry');
  }
  checkOptions(given, ['tracing', 'metrics', 'gaugeIntervalMs'], { what: 'telemetry', where: 'telemetry.' });
  for (const key of ['tracing', 'metrics'] as const) {
    if (given[key] !== undefined && typeof given[key] !== 'boolean') {
      throw new InvalidArgumentError(`telemetry.${key} must be true or false, got ${showValue(given[key])}.`, `telemetry.${key}`);
    }
  }
  const interval = given.gaugeIntervalMs ?? DEFAULT_GAUGE_INTERVAL_MS;
  if (typeof interval !== 'number' || !Number.isInteger(interval) || interval < 1_000 || interval > 3_600_000) {
    throw new InvalidArgumentError(`telemetry.gaugeIntervalMs must be a whole number of milliseconds from 1000 to 3600000, got ${showValue(interval)}.`, 'telemetry.gaugeIntervalMs');
  }
  const resolved = { tracing: given.tracing ?? true, metrics: given.metrics ?? true, gaugeIntervalMs: interval };
  return resolved.tracing || resolved.metrics ? resolved : null;
}
