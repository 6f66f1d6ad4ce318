// Latency from enqueue commit (the producer's await returned) to handler start, read on one clock
// (performance.timeOrigin + now() in both processes). Idle: serial jobs, each enqueued 0–20 ms after
// the previous one started. Load: open loop at a fixed rate, enqueued every 10 ms in small batches.
import { now, payload, percentile, sleep, startWorkers, until } from '../peers/cell.mjs';
import { systems, variants } from '../systems/index.mjs';

function summarize(commits, starts) {
  const startOf = new Map(starts);
  const latencies = [...commits].filter(([k]) => startOf.has(k)).map(([k, t]) => startOf.get(k) - t);
  return {
    samples: latencies.length,
    missing: commits.size - latencies.length,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    // Not Math.max(...latencies): an open loop at full size collects a few hundred thousand samples,
    // more arguments than a call can take.
    max: latencies.reduce((most, v) => (v > most ? v : most), Number.NEGATIVE_INFINITY),
  };
}

export async function latencyCell(server, variantId, c, { serial = 0, rate = 0, seconds = 0, capMs = 30_000 }) {
  const variant = variants[variantId];
  const system = systems[variant.system];
  const db = await server.database(system);
  try {
    const settings = variant.settings(c);
    const producer = await system.producer(db.url, 10, settings);
    const workers = await startWorkers({ system: variant.system, url: db.url, settings, keys: true });
    await sleep(500); // let every peer reach its steady idle state (pollers, LISTEN)
    const commits = new Map();
    const seen = () => new Set(workers.starts.map(([k]) => k));
    if (serial) {
      for (let k = 0; k < serial; k++) {
        await producer.add(payload(k));
        commits.set(k, now());
        if (!(await until(() => workers.starts.some(([key]) => key === k), capMs, 1))) break;
        await sleep(Math.random() * 20); // a short random gap, so no system is caught mid-loop every time
      }
    } else {
      const t0 = now();
      let sent = 0;
      while (now() - t0 < seconds * 1_000) {
        const due = Math.floor(((now() - t0) / 1_000) * rate) - sent;
        if (due > 0) {
          const keys = Array.from({ length: due }, (_, i) => sent + i);
          sent += due;
          await (due === 1 ? producer.add(payload(keys[0])) : producer.addMany(keys.map(payload)));
          const t = now();
          for (const k of keys) commits.set(k, t);
        }
        await sleep(10);
      }
      await until(() => seen().size >= sent, capMs, 20);
    }
    await producer.close();
    await workers.stop();
    return { variant: variantId, c, mode: serial ? 'idle' : 'load', rate, ...summarize(commits, workers.starts) };
  } finally {
    await db.drop();
  }
}
