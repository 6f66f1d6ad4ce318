// Soak: workers drain while a producer keeps a backlog of about 5,000 jobs. In the middle third a
// session sits idle in a REPEATABLE READ transaction (holding back vacuum's horizon). Reported:
// throughput and dead tuples per window, and the recovery ratio: the median throughput of the
// windows within 2 minutes after the transaction ended (the final third in quick mode) over the
// first third's median.
import pg from 'pg';
import { median } from '../support.mjs';
import { now, payload, sleep, startWorkers } from '../peers/cell.mjs';
import { systems, variants } from '../systems/index.mjs';

export async function soakCell(server, variantId, c, seconds, windowS) {
  const variant = variants[variantId];
  const system = systems[variant.system];
  const db = await server.database(system);
  const holder = new pg.Client(db.url);
  try {
    const producer = await system.producer(db.url);
    const workers = await startWorkers({ system: variant.system, url: db.url, settings: variant.settings(c) });
    let enqueued = 0;
    let running = true;
    const feed = (async () => {
      while (running) {
        if (enqueued - workers.count() < 5_000) {
          await producer.addMany(Array.from({ length: 1_000 }, (_, i) => payload(enqueued + i)));
          enqueued += 1_000;
        } else await sleep(5);
      }
    })();
    await holder.connect();
    const windows = [];
    const t0 = now();
    const third = seconds / 3;
    let holding = false;
    let last = workers.count();
    while (now() - t0 < seconds * 1_000) {
      await sleep(windowS * 1_000);
      const t = (now() - t0) / 1_000;
      if (!holding && t >= third && t < 2 * third) {
        await holder.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
        await holder.query('SELECT count(*) FROM pg_class');
        holding = true;
      } else if (holding && t >= 2 * third) {
        await holder.query('COMMIT');
        holding = false;
      }
      const count = workers.count();
      const { dead } = await db.tables();
      windows.push({ t: Math.round(t), jobsPerSec: (count - last) / windowS, deadTuples: dead, held: holding });
      last = count;
    }
    running = false;
    await feed;
    await producer.close();
    await workers.stop();
    const first = windows.filter((w) => w.t <= third).map((w) => w.jobsPerSec);
    const after = windows.filter((w) => w.t > 2 * third && w.t <= 2 * third + 120).map((w) => w.jobsPerSec);
    const held = windows.filter((w) => w.t > third && w.t <= 2 * third).map((w) => w.jobsPerSec);
    return {
      variant: variantId,
      seconds,
      windows,
      firstThird: median(first),
      heldThird: median(held),
      afterRelease: median(after),
      recoveryRatio: median(after) / median(first),
    };
  } finally {
    await holder.end().catch(() => {});
    await db.drop();
  }
}
