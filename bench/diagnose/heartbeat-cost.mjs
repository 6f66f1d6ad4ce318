// What a heartbeat costs: claims --leases jobs on one PostgreSQL store, then renews all their
// leases --beats times in a row, and prints the median and p90 time of one renewal, with no limit
// and with every job under a concurrency key capped high enough to run them all (so each renewal
// also renews a slot per job). For A/B runs of the heartbeat statement between two builds.
// Usage: DATABASE_URL=… node bench/diagnose/heartbeat-cost.mjs [--leases 200] [--beats 300]
import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import { PostgresJobStore } from '../../dist/lib/index.js';
import { Server } from '../peers/cell.mjs';
import { median, postgres } from '../support.mjs';
import ours from '../systems/ours.mjs';

const { values } = parseArgs({ options: { leases: { type: 'string', default: '200' }, beats: { type: 'string', default: '300' } } });
const LEASES = Number(values.leases);
const pgServer = await postgres();
const server = new Server(pgServer.url);
for (const capped of [false, true]) {
  const db = await server.database(ours);
  const dataSource = await new DataSource({ type: 'postgres', url: db.url, extra: { max: 4 } }).initialize();
  const store = new PostgresJobStore({ dataSource });
  await store.migrate();
  if (capped) await store.concurrencyLimitSet({ target: { key: 'k' }, max: LEASES });
  await store.jobEnqueueMany({ jobs: Array.from({ length: LEASES }, (_, i) => ({ name: 'noop', payload: i, ...(capped ? { concurrencyKey: 'k' } : {}) })) });
  const jobs = await store.jobClaim({ workerId: 'w', limit: LEASES, queues: ['default'], leaseMs: 60_000 });
  const leases = jobs.map((j) => ({ jobId: j.id, attempt: j.attempt }));
  const times = [];
  for (let i = 0; i < Number(values.beats); i++) {
    const t0 = performance.now();
    const result = await store.jobHeartbeat({ workerId: 'w', leases, leaseMs: 60_000 });
    times.push(performance.now() - t0);
    if (result.renewed.length !== leases.length) throw new Error(`renewed ${result.renewed.length} of ${leases.length}`);
  }
  times.sort((a, b) => a - b);
  console.log(`${capped ? 'capped' : 'no limit'}: ${leases.length} leases, median ${median(times).toFixed(2)} ms, p90 ${times[Math.floor(times.length * 0.9)].toFixed(2)} ms per heartbeat`);
  await store.close();
  await dataSource.destroy();
  await db.drop();
}
await server.close();
await pgServer.stop();
