// pg-boss 10.4.2: a queue made with createQueue, send/insert, and N work() calls.
import PgBoss from 'pg-boss';

const QUEUE = 'noop';
const job = (data, opts = {}) => ({
  name: QUEUE,
  data,
  ...(opts.runAt ? { startAfter: opts.runAt } : {}),
  ...(opts.maxAttempts ? { retryLimit: opts.maxAttempts - 1, retryDelay: 0 } : {}),
});

async function boss(url, max, extra = {}) {
  const b = new PgBoss({ connectionString: url, max, ...extra });
  b.on('error', () => {});
  await b.start();
  return b;
}

export default {
  name: 'pg-boss',
  batchLimit: 5_000,
  remainingSql: `SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'noop' AND state < 'completed' AND start_after < now() + interval '1 day'`,
  async install(url) {
    const b = await boss(url, 2, { supervise: false, schedule: false });
    await b.createQueue(QUEUE);
    await b.stop({ graceful: false, wait: true });
  },
  async producer(url, max = 10) {
    const b = await boss(url, max, { supervise: false, schedule: false });
    return {
      add: (data, opts = {}) => b.send(QUEUE, data, job(data, opts)),
      addMany: (datas, opts) => b.insert(datas.map((d) => job(d, opts))),
      close: () => b.stop({ graceful: false, wait: true }),
    };
  },
  /** settings: { workers, batchSize, pollingIntervalSeconds, expireInSeconds?, maintenanceIntervalSeconds? } */
  async worker(url, settings, handler, max = 10) {
    const { workers = 1, batchSize, pollingIntervalSeconds, ...config } = settings;
    const b = await boss(url, max, { schedule: false, ...config });
    const options = { ...(batchSize ? { batchSize } : {}), ...(pollingIntervalSeconds ? { pollingIntervalSeconds } : {}) };
    // pg-boss 10 hands every handler an array; a throw fails the whole batch, so run jobs one by one.
    for (let i = 0; i < workers; i++) {
      await b.work(QUEUE, options, async (jobs) => {
        const failures = [];
        await Promise.all(jobs.map((j) => Promise.resolve(handler(j.data, (j.retryCount ?? 0) + 1)).catch((e) => failures.push([j.id, e]))));
        if (failures.length === jobs.length && failures.length > 0) throw failures[0][1];
        for (const [id, e] of failures) await b.fail(QUEUE, id, { message: String(e) });
      });
    }
    return { stop: () => b.stop({ graceful: true, wait: true, timeout: 2_000 }) };
  },
};
