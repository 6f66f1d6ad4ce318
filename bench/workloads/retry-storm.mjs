// Retry storm: N jobs whose handler throws on a job's first two attempts. Every job must end with
// exactly 3 attempts and succeed; none may be lost or run a 4th time.
import { now, payload, startWorkers, until } from '../peers/cell.mjs';
import { systems, variants } from '../systems/index.mjs';
import { prefill } from './drain.mjs';

export async function retryStormCell(server, variantId, c, jobs, capMs) {
  const variant = variants[variantId];
  const system = systems[variant.system];
  const db = await server.database(system);
  try {
    const producer = await system.producer(db.url);
    await prefill(producer, system, 0, jobs, { maxAttempts: 3 });
    await producer.close();
    await db.analyze(); // as in the drain cells
    const workers = await startWorkers({ system: variant.system, url: db.url, settings: variant.settings(c), mode: 'fail-twice' });
    const t0 = now();
    await until(() => workers.count() >= 3 * jobs, capMs, 20);
    let left = jobs;
    await until(async () => (left = await db.remaining()) === 0, Math.max(2_000, capMs - (now() - t0)), 20);
    const seconds = (now() - t0) / 1_000;
    const [proc] = await workers.stop();
    const exactly3 = proc.attempts[3] ?? 0;
    return {
      variant: variantId,
      jobs,
      seconds,
      attemptsPerSec: workers.count() / seconds,
      exactly3,
      fewer: Object.entries(proc.attempts).filter(([n]) => Number(n) < 3).reduce((a, [, v]) => a + v, 0),
      more: Object.entries(proc.attempts).filter(([n]) => Number(n) > 3).reduce((a, [, v]) => a + v, 0),
      neverRan: jobs - Object.values(proc.attempts).reduce((a, v) => a + v, 0),
      leftInTable: left,
    };
  } finally {
    await db.drop();
  }
}
