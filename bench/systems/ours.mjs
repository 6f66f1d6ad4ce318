// Our library, run the way a service without NestJS runs it: WorkerNode + FunctionInvoker +
// PostgresJobStore on a TypeORM DataSource, woken by LISTEN/NOTIFY and polling as a fallback.
import { DataSource } from 'typeorm';
import { PostgresJobStore } from '../../dist/lib/index.js';
import { FunctionInvoker, WorkerNode } from '../../dist/lib/worker/public-api.js';
import { SchedulerTelemetry } from '../../dist/lib/telemetry/index.js';
import { WORKER_OPTION_KEYS } from '../../dist/lib/worker/worker-options.js';

/**
 * A variant's settings, split where the library takes them: WorkerOptions keys to the WorkerNode,
 * any other key to PostgresJobStore (asyncClaimCommit, and whatever store option comes next). Both
 * refuse keys they do not know, so a setting the library does not have yet fails loudly.
 */
function split({ telemetry, ...settings }) {
  const node = {};
  const store = {};
  for (const [key, value] of Object.entries(settings)) (WORKER_OPTION_KEYS.includes(key) ? node : store)[key] = value;
  return { telemetry, node, store };
}

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
  /**
   * Why this build refuses the settings (a key neither WorkerOptions nor PostgresJobStore has), or
   * null. The store checks its keys before it looks at the DataSource, so an uninitialized one serves.
   */
  accepts(settings) {
    try {
      new PostgresJobStore({ dataSource: new DataSource({ type: 'postgres' }), ...split(settings).store });
    } catch (error) {
      if (error.argument !== 'dataSource') return error.message;
    }
    return null;
  },
  /** settings: WorkerOptions and PostgresJobStore options (asyncClaimCommit), and `telemetry` ('api', 'sdk', 'sdk-traces' or 'sdk-metrics'). */
  async worker(url, allSettings, handler, max = 10) {
    const { telemetry: otel, node: settings, store: storeOptions } = split(allSettings);
    const { dataSource, store } = await open(url, max, storeOptions);
    if (otel?.startsWith('sdk')) await registerNoopSdk();
    const silent = { log() {}, warn() {}, error() {} };
    // sdk-traces and sdk-metrics split the SDK's cost between spans and samples.
    const options = otel === 'sdk-traces' ? { metrics: false } : otel === 'sdk-metrics' ? { tracing: false } : true;
    const telemetry = otel ? SchedulerTelemetry.create(options, { store, logger: silent, errorLogDetail: 'message' }) : null;
    const invoker = new FunctionInvoker({
      noop: { handle: (payload, context) => handler(payload, context.attempt, context), retry: { baseDelayMs: 10, maxDelayMs: 100 } },
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
