// Our library, run the way a service without NestJS runs it: WorkerNode + FunctionInvoker +
// PostgresJobStore on a TypeORM DataSource, woken by LISTEN/NOTIFY and polling as a fallback.
import { DataSource } from 'typeorm';
import { PostgresJobStore } from '../../dist/lib/index.js';
import { FunctionInvoker, WorkerNode } from '../../dist/lib/worker/public-api.js';

async function open(url, max, storeOptions = {}) {
  const dataSource = await new DataSource({ type: 'postgres', url, extra: { max } }).initialize();
  return { dataSource, store: new PostgresJobStore({ dataSource, ...storeOptions }) };
}

const input = (payload, opts = {}) => ({ name: 'noop', payload, ...(opts.runAt ? { runAt: opts.runAt } : {}), ...(opts.maxAttempts ? { maxAttempts: opts.maxAttempts } : {}) });

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
  /** settings: WorkerOptions, plus the store option asyncClaimCommit. */
  async worker(url, { asyncClaimCommit, ...settings }, handler, max = 10) {
    const { dataSource, store } = await open(url, max, { asyncClaimCommit });
    const invoker = new FunctionInvoker({
      noop: { handle: (payload, context) => handler(payload, context.attempt), retry: { baseDelayMs: 10, maxDelayMs: 100 } },
    });
    const node = new WorkerNode({ store, invoker, options: { scheduling: false, shutdownGraceMs: 1_000, ...settings } });
    await node.start();
    return {
      stop: async () => {
        await node.stop();
        await dataSource.destroy();
      },
    };
  },
};
