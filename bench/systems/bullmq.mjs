// BullMQ 6: one Queue/Worker API over two backends. `bullmq-redis` is the default Redis backend
// (ioredis); `bullmq-pg` is the PostgreSQL backend, selected by passing `createPostgresBackend` as
// the constructors' last argument, with its own schema (`bullmq`), migrations and LISTEN client.
import pg from 'pg';
import { Queue, Worker, createPostgresBackend, runMigrations } from 'bullmq';

const QUEUE = 'noop';

// Job options from the bench's own: `removeOnComplete` is a variant setting, given at enqueue as
// BullMQ's guide shows; priorities are ours only.
const jobOptions = (opts = {}, settings = {}) => ({
  ...(opts.runAt ? { delay: Math.max(0, opts.runAt.getTime() - Date.now()) } : {}),
  ...(opts.maxAttempts ? { attempts: opts.maxAttempts } : {}),
  ...(settings.removeOnComplete ? { removeOnComplete: settings.removeOnComplete } : {}),
});

// A worker or queue error is a failed cell, not noise: say it, once per instance and message.
const report = (what) => {
  const seen = new Set();
  return (e) => !seen.has(e.message) && (seen.add(e.message), console.error(`  bullmq ${what}: ${e.message}`));
};

function system({ name, backend, connection, factory }) {
  return {
    name,
    backend,
    batchLimit: 1_000,
    /**
     * settings: the variant's. `removeOnComplete` goes on every job at enqueue; the rest are
     * WorkerOptions. The worker-process pool size bounds the PostgreSQL backend's connections.
     */
    async producer(url, max = 10, settings = {}) {
      const queue = new Queue(QUEUE, { connection: connection(url, max) }, factory);
      queue.on('error', report('queue'));
      await queue.waitUntilReady();
      return {
        add: (data, opts) => queue.add('noop', data, jobOptions(opts, settings)),
        addMany: (datas, opts) => queue.addBulk(datas.map((data) => ({ name: 'noop', data, opts: jobOptions(opts, settings) }))),
        close: () => queue.close(),
      };
    },
    /** settings: WorkerOptions (concurrency, lockDuration, stalledInterval, …) and removeOnComplete (enqueue only). */
    async worker(url, { removeOnComplete: _enqueueOnly, ...settings }, handler, max = 10) {
      const worker = new Worker(QUEUE, (job) => handler(job.data, job.attemptsMade + 1), { connection: connection(url, max), ...settings }, factory);
      worker.on('error', report('worker'));
      await worker.waitUntilReady();
      return { stop: () => worker.close() };
    },
  };
}

/** Redis: the cell's URL names its own database index (redis://host:port/db); see peers/redis-cell.mjs. */
export const bullmqRedis = {
  ...system({ name: 'BullMQ (Redis)', backend: 'redis', connection: (url) => ({ url }), factory: undefined }),
  /** Jobs not finished: what a drain waits for. Delayed jobs count, so BullMQ stays out of the future-dated section. */
  async probe(url) {
    const queue = new Queue(QUEUE, { connection: { url } });
    queue.on('error', report('probe'));
    return {
      remaining: async () => {
        const counts = await queue.getJobCounts('wait', 'active', 'prioritized', 'delayed', 'paused');
        return Object.values(counts).reduce((a, b) => a + b, 0);
      },
      close: () => queue.close(),
    };
  },
};

export const bullmqPg = {
  // The LISTEN client is a connection of its own beside the pool: pool + 1 = the cell's cap.
  ...system({ name: 'BullMQ (PostgreSQL)', backend: 'postgres', connection: (url, max) => ({ connectionString: url, max: Math.max(1, max - 1) }), factory: createPostgresBackend }),
  // A retry waits in `delayed` with its due time in process_at_ms (epoch ms).
  remainingSql: `SELECT count(*)::int AS n FROM bullmq.job WHERE queue = '${QUEUE}' AND (state IN ('waiting', 'active')
    OR (state = 'delayed' AND process_at_ms < extract(epoch FROM now() + interval '1 day') * 1000))`,
  /** BullMQ's explicit migration step: runMigrations on one dedicated session (its advisory lock and transaction share it). */
  async install(url) {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await runMigrations(client);
    } finally {
      await client.end();
    }
  },
};
