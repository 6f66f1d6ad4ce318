// Crash recovery: a victim process takes 100 jobs whose handler never returns; a rescuer process
// is started and idles; the victim is killed with SIGKILL. Measured: time from the kill until the
// rescuer has started all 100. Capped; a peer that needs longer is reported as "> cap".
import { now, payload, sleep, startWorkers, until } from '../peers/cell.mjs';
import { systems, variants } from '../systems/index.mjs';
import { prefill } from './drain.mjs';

/** Per system: how a worker holding 100 jobs is configured; `recovery` names the mechanism. */
export const crashSettings = {
  // A short lease, said so in the results: 5 s lease, 1 s heartbeat, 1 s poll.
  'ours-tuned': { settings: { concurrency: 100, claimBatchSize: 100, leaseMs: 5_000, heartbeatIntervalMs: 1_000, pollIntervalMs: 1_000 }, lease_s: 5 },
  'graphile-tuned': { settings: { concurrency: 100, preset: { worker: { localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } } }, lease_s: 4 * 3600 },
  'pgboss-tuned': { settings: { workers: 1, batchSize: 100, pollingIntervalSeconds: 0.5 }, lease_s: 15 * 60 },
  // BullMQ's defaults, written out: a lock of 30 s, renewed every 15 s, and a stalled check run at
  // most once per 30 s per queue. A pass marks every active job; a later pass moves back to wait
  // those still marked whose lock has lapsed. So a job comes back only after its lock lapses (up
  // to 30 s after the kill) and a pass that had marked it has been followed by another.
  'bullmq-redis-tuned-keep': { settings: { concurrency: 100, lockDuration: 30_000, stalledInterval: 30_000, maxStalledCount: 1 }, lease_s: 30, stalled_s: 30 },
  'bullmq-pg-tuned-keep': { settings: { concurrency: 100, lockDuration: 30_000, stalledInterval: 30_000, maxStalledCount: 1 }, lease_s: 30, stalled_s: 30 },
};

export async function crashCell(server, variantId, capMs) {
  const variant = variants[variantId];
  const system = systems[variant.system];
  const { settings, lease_s, stalled_s = null } = crashSettings[variantId];
  const db = await server.database(system);
  try {
    const producer = await system.producer(db.url, 10, settings);
    await prefill(producer, system, 0, 100, { maxAttempts: 5 });
    await producer.close();
    const victim = await startWorkers({ system: variant.system, url: db.url, settings, mode: 'hang' });
    const held = await until(() => victim.count() >= 100, 30_000, 20);
    const heldAt = now();
    const rescuer = await startWorkers({ system: variant.system, url: db.url, settings, keys: true });
    await sleep(200);
    const killedAt = now();
    victim.children[0].kill('SIGKILL');
    const recovered = await until(() => new Set(rescuer.starts.map(([k]) => k)).size >= 100, capMs, 20);
    const seconds = (now() - killedAt) / 1_000;
    const rescued = new Set(rescuer.starts.map(([k]) => k)).size;
    await rescuer.stop();
    // heldForS: the lease was already this old at the kill (ours measures the lease from the claim).
    return { variant: variantId, held, heldForS: (killedAt - heldAt) / 1_000, recovered, seconds: recovered ? seconds : null, capSeconds: capMs / 1_000, rescued, lease_s, stalled_s };
  } finally {
    await db.drop();
  }
}
