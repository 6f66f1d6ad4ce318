// Drain: prefill N jobs (optionally behind F future-dated ones), then start the workers and time
// from the first handler start until the system's own table says nothing is left to run.
import { now, payload, startWorkers, until } from '../peers/cell.mjs';
import { systems, variants } from '../systems/index.mjs';

export async function prefill(producer, system, from, count, opts) {
  const size = Math.min(1_000, system.batchLimit);
  for (let i = 0; i < count; i += size) {
    await producer.addMany(Array.from({ length: Math.min(size, count - i) }, (_, j) => payload(from + i + j)), opts);
  }
}

/**
 * One drain cell. Returns jobs/s and the per-job cost counters. `futurePriority` and `duePriority`
 * (a number or a function of the payload) set the priorities of the future-dated and the due jobs,
 * for systems that take one (ours). `mode` is the handlers' (peers/worker-process.mjs), `noop` by default.
 */
export async function drainCell(server, variantId, { c, processes = 1, jobs, futures = 0, capMs, futurePriority, duePriority, mode = 'noop' }) {
  const variant = variants[variantId];
  const system = systems[variant.system];
  const db = await server.database(system);
  try {
    const settings = variant.settings(c);
    const producer = await system.producer(db.url, 10, settings);
    const priority = (p) => (p === undefined ? {} : { priority: p });
    if (futures) await prefill(producer, system, 10_000_000, futures, { runAt: new Date(Date.now() + 30 * 86_400_000), ...priority(futurePriority) });
    await prefill(producer, system, 0, jobs, priority(duePriority));
    await producer.close();
    // Every system's tables get the statistics autovacuum would gather within its first minute: a
    // never-analyzed table makes planners guess a handful of due rows, and a drain lasts seconds.
    await db.analyze();
    await server.admin.query('CHECKPOINT');
    await db.settle();
    const before = await db.counters();
    const serverCpu0 = await db.serverCpuMs();
    const workers = await startWorkers({ system: variant.system, url: db.url, settings, processes, mode });
    const started = now();
    await until(() => workers.count() >= jobs, capMs, 20);
    let left = jobs;
    await until(async () => (left = await db.remaining()) === 0, Math.max(2_000, capMs - (now() - started)), 5);
    const end = now();
    const t0 = Number.isFinite(workers.first()) ? workers.first() : started;
    const done = jobs - left;
    const procs = await workers.stop();
    const serverCpu = serverCpu0 === null ? null : (await db.serverCpuMs()) - serverCpu0;
    await db.settle();
    const after = await db.counters();
    const tables = await db.tables();
    return {
      variant: variantId,
      c,
      processes,
      jobs,
      futures,
      done,
      capped: left > 0,
      seconds: (end - t0) / 1_000,
      jobsPerSec: done / ((end - t0) / 1_000),
      // null where the server has no such counter (Redis): a dash in the tables.
      commitsPerJob: before.commits === null ? null : (after.commits - before.commits - db.polls()) / Math.max(1, done),
      walBytesPerJob: before.wal === null ? null : (after.wal - before.wal) / Math.max(1, done),
      fpiPerJob: before.fpi == null ? null : (after.fpi - before.fpi) / Math.max(1, done),
      checkpoints: before.checkpoints == null ? null : after.checkpoints - before.checkpoints,
      // The cell's stretch of the server's WAL, for diagnose/wal-records.mjs (null on Redis).
      lsns: before.lsn ? [before.lsn, after.lsn] : null,
      deadTuples: tables.dead,
      tableBytes: tables.bytes,
      cpuMsPerJob: procs.reduce((a, p) => a + p.cpuMs, 0) / Math.max(1, done),
      serverCpuMsPerJob: serverCpu === null ? null : serverCpu / Math.max(1, done),
      peakRssMb: Math.max(...procs.map((p) => p.peakRss)) / 2 ** 20,
    };
  } finally {
    await db.drop();
  }
}
