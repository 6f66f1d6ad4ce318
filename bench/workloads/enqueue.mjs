// Enqueue: single adds from one client, single adds from 16 concurrent clients, and bulk adds of
// 1,000 (each system's own batch API). No worker runs.
import { now, payload } from '../peers/cell.mjs';
import { systems } from '../systems/index.mjs';
import { prefill } from './drain.mjs';

export const enqueueModes = ['single, 1 client', 'single, 16 clients', 'bulk of 1,000'];

export async function enqueueCell(server, systemId, mode, jobs) {
  const system = systems[systemId];
  const db = await server.database(system);
  try {
    const producer = await system.producer(db.url, mode === 'single, 16 clients' ? 16 : 10);
    await producer.add(payload(-1)); // connect first
    await server.admin.query('CHECKPOINT');
    const before = await db.counters();
    const t0 = now();
    if (mode === 'single, 1 client') for (let i = 0; i < jobs; i++) await producer.add(payload(i));
    else if (mode === 'single, 16 clients') {
      let next = 0;
      await Promise.all(Array.from({ length: 16 }, async () => {
        while (next < jobs) await producer.add(payload(next++));
      }));
    } else await prefill(producer, system, 0, jobs);
    const seconds = (now() - t0) / 1_000;
    await producer.close();
    await db.idle(15_000, 0);
    const after = await db.counters();
    const tables = await db.tables();
    return {
      system: systemId,
      mode,
      jobs,
      jobsPerSec: jobs / seconds,
      commitsPerJob: before.commits === null ? null : (after.commits - before.commits) / jobs,
      walBytesPerJob: before.wal === null ? null : (after.wal - before.wal) / jobs,
      tableBytes: tables.bytes,
    };
  } finally {
    await db.drop();
  }
}
