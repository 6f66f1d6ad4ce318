// Our library, run the way a service without NestJS runs it: WorkerNode + FunctionInvoker +
// PostgresJobStore on a TypeORM DataSource, woken by LISTEN/NOTIFY and polling as a fallback.
import { DataSource } from 'typeorm';
import { PostgresJobStore } from '../../dist/lib/index.js';
import { FunctionInvoker, WorkerNode } from '../../dist/lib/worker/public-api.js';
import { SchedulerTelemetry } from '../../dist/lib/telemetry/index.js';

/**
 * An SDK as a host would register it, exporting nowhere: spans are recorded and batched, then
 * dropped; metrics are aggregated by a reader nobody collects from. What remains is our cost.
 */
async function registerNoopSdk() {
  const { context, metrics, trace } = await import('@opentelemetry/api');
  const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
  const { BasicTracerProvider, BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
  const { MeterProvider, MetricReader } = await import('@opentelemetry/sdk-metrics');
  const exporter = { export: (_spans, done) => done({ code: 0 }), shutdown: async () => {} };
  class IdleReader extends MetricReader {
    async onForceFlush() {}
    async onShutdown() {}
  }
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter)] }));
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [new IdleReader()] }));
}

async function open(url, max, storeOptions = {}) {
  const dataSource = await new DataSource({ type: 'postgres', url, extra: { max } }).initialize();
  return { dataSource, store: new PostgresJobStore({ dataSource, ...storeOptions }) };
}

// `priority` is a number, or a function of the payload (the bench's mixes of priorities).
const input = (payload, opts = {}) => ({
  name: 'noop',
  payload,
  ...(opts.runAt ? { runAt: opts.runAt } : {}),
  ...(opts.maxAttempts ? { maxAttempts: opts.maxAttempts } : {}),
  ...(opts.priority !== undefined ? { priority: typeof opts.priority === 'function' ? opts.priority(payload) : opts.priority } : {}),
});

export default {
  name: 'ours',
  batchLimit: 1_000,
  remainingSql: `SELECT count(*)::int AS n FROM durable_scheduler.jobs WHERE state NOT IN ('succeeded', 'dead_lettered', 'cancelled') AND run_at < now() + interval '1 day'`,
  async install(url) {
    const { dataSource, store } = await open(url, 2);
    await store.migrate();
    await dataSource.destroy();
  },
  async producer(url, max = 10) {
    const { dataSource, store } = await open(url, max);
    return {
      add: (payload, opts) => store.jobEnqueue({ job: input(payload, opts) }),
      addMany: (payloads, opts) => store.jobEnqueueMany({ jobs: payloads.map((p) => input(p, opts)) }),
      close: () => dataSource.destroy(),
    };
  },
  /** settings: WorkerOptions, plus the store options asyncClaimCommit and finish, and `telemetry` ('api', 'sdk', 'sdk-traces' or 'sdk-metrics'). */
  async worker(url, { asyncClaimCommit, finish, telemetry: otel, ...settings }, handler, max = 10) {
    const { dataSource, store } = await open(url, max, { asyncClaimCommit, finish });
    if (otel?.startsWith('sdk')) await registerNoopSdk();
    const silent = { log() {}, warn() {}, error() {} };
    // sdk-traces and sdk-metrics split the SDK's cost between spans and samples.
    const options = otel === 'sdk-traces' ? { metrics: false } : otel === 'sdk-metrics' ? { tracing: false } : true;
    const telemetry = otel ? SchedulerTelemetry.create(options, { store, logger: silent, errorLogDetail: 'message' }) : null;
    const invoker = new FunctionInvoker({
      noop: { handle: (payload, context) => handler(payload, context.attempt), retry: { baseDelayMs: 10, maxDelayMs: 100 } },
    });
    const attemptHooks = telemetry?.attemptHook ? [telemetry.attemptHook] : [];
    const node = new WorkerNode({ store, invoker, options: { scheduling: false, shutdownGraceMs: 1_000, ...settings }, attemptHooks });
    telemetry?.attach(node);
    await node.start();
    return {
      stop: async () => {
        await node.stop();
        await dataSource.destroy();
      },
    };
  },
};
