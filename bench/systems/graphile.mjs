// graphile-worker 0.17.3: runMigrations, WorkerUtils.addJob/addJobs, run() with a task list.
import { Logger, makeWorkerUtils, run, runMigrations } from 'graphile-worker';

const logger = new Logger(() => () => {});
const spec = (payload, opts = {}) => ({ identifier: 'noop', payload, ...(opts.runAt ? { runAt: opts.runAt } : {}), ...(opts.maxAttempts ? { maxAttempts: opts.maxAttempts } : {}) });

export default {
  name: 'graphile-worker',
  batchLimit: 10_000,
  // Finished jobs are deleted; failed ones that will retry keep their row.
  remainingSql: `SELECT count(*)::int AS n FROM graphile_worker._private_jobs WHERE run_at < now() + interval '1 day' AND attempts < max_attempts`,
  async install(url) {
    await runMigrations({ connectionString: url, logger });
  },
  async producer(url, max = 10) {
    const utils = await makeWorkerUtils({ connectionString: url, maxPoolSize: max, logger });
    return {
      add: (payload, opts = {}) => utils.addJob('noop', payload, { ...(opts.runAt ? { runAt: opts.runAt } : {}), ...(opts.maxAttempts ? { maxAttempts: opts.maxAttempts } : {}) }),
      addMany: (payloads, opts) => utils.addJobs(payloads.map((p) => spec(p, opts))),
      close: () => utils.release(),
    };
  },
  /** settings: { concurrency, preset?, pollInterval? } */
  async worker(url, settings, handler, max = 10) {
    const { preset, ...rest } = settings;
    const runner = await run({
      connectionString: url,
      maxPoolSize: max,
      noHandleSignals: true,
      logger,
      ...rest,
      ...(preset ? { preset } : {}),
      taskList: { noop: (payload, helpers) => handler(payload, helpers.job.attempts) },
    });
    // 0.17.3's stop() returns before the pool has closed; the runner waits for pg_stat_activity.
    return { stop: () => runner.stop() };
  },
};
