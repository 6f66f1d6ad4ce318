// One in-process drain (as bench/diagnose/drain-profile.mjs does it): N no-op jobs enqueued in
// batches of 1,000, ANALYZE and CHECKPOINT (as the peers bench's drain cells do), then one
// WorkerNode with our tuned settings (bench/systems/index.mjs: concurrency 200, claims of 200, the
// store option asyncClaimCommit) drains them. Timed from start() to the last job's handler.
import { performance } from 'node:perf_hooks';
import { postgresCpuMs } from '../support.mjs';

export const TUNED = { concurrency: 200, claimBatchSize: 200, scheduling: false };
const payload = (k) => ({ k, pad: 'x'.repeat(84) }); // ~100 bytes of JSON, as every bench

/**
 * Drains `jobs` jobs in the database at `url`. `queueOf(k)` places job k; the node serves `queues`.
 * `otherNames` get a no-op handler too (jobs the prefill left that a release might make due), but
 * only the drain's own jobs are counted. Resolves with jobs/s and CPU per job, or `capped`.
 */
export async function drainOnce({ library, url, jobs, queues = ['default'], queueOf = () => 'default', otherNames = [], capMs = 600_000 }) {
  const { dataSource, store, close } = await library.open(url, { max: 10, store: { asyncClaimCommit: true } });
  try {
    for (let i = 0; i < jobs; i += 1_000) {
      const n = Math.min(1_000, jobs - i);
      await store.jobEnqueueMany({ jobs: Array.from({ length: n }, (_, j) => ({ name: 'noop', queue: queueOf(i + j), payload: payload(i + j) })) });
    }
    await dataSource.query('ANALYZE durable_scheduler.jobs');
    await dataSource.query('CHECKPOINT');
    let done = 0;
    let finish;
    const finished = new Promise((resolve) => (finish = resolve));
    const handlers = Object.fromEntries(otherNames.map((name) => [name, { handle: () => {} }]));
    handlers.noop = { handle: () => void (++done === jobs && finish(true)) };
    const node = new library.WorkerNode({ store, invoker: new library.FunctionInvoker(handlers), options: { ...TUNED, queues } });
    const cpu0 = process.cpuUsage();
    const pg0 = postgresCpuMs();
    const t0 = performance.now();
    await node.start();
    const cap = setTimeout(() => finish(false), capMs);
    const complete = await finished;
    const ms = performance.now() - t0;
    clearTimeout(cap);
    const cpu = process.cpuUsage(cpu0);
    const pgMs = pg0 === null ? null : postgresCpuMs() - pg0;
    await node.stop();
    return {
      jobsPerSec: Math.round(done / (ms / 1_000)),
      ms: Math.round(ms),
      done,
      capped: !complete,
      nodeCpuMsPerJob: +((cpu.user + cpu.system) / 1_000 / done).toFixed(4),
      pgCpuMsPerJob: pgMs === null ? null : +(pgMs / done).toFixed(4),
    };
  } finally {
    await close();
  }
}
