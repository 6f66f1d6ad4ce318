// Bulk enqueue in one process: B batches of 1,000 through jobEnqueueMany, with the statement's time
// as the client sees it. HISTORY=off shows what the history entry of each new job costs.
// Usage: node bench/diagnose/enqueue-profile.mjs [--batches 50]
import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import { PostgresJobStore } from '../../dist/lib/index.js';
import { payload, Server } from '../peers/cell.mjs';
import { startProfile } from './cpu-profile.mjs';
import { postgres } from '../support.mjs';
import ours from '../systems/ours.mjs';

const { values } = parseArgs({ options: { batches: { type: 'string', default: '50' } } });
const pgServer = await postgres();
const server = new Server(pgServer.url);
const db = await server.database(ours);
const dataSource = await new DataSource({ type: 'postgres', url: db.url, extra: { max: 2 } }).initialize();
const store = new PostgresJobStore({ dataSource, historyPolicy: process.env.HISTORY ?? undefined });
await store.migrate();
const batches = Number(values.batches);
let sqlMs = 0;
const pool = dataSource.driver.master;
const query = pool.query.bind(pool);
pool.query = async (...args) => {
  const t = performance.now();
  try {
    return await query(...args);
  } finally {
    sqlMs += performance.now() - t;
  }
};
const stopProfile = await startProfile();
const cpu0 = process.cpuUsage();
const t0 = performance.now();
for (let b = 0; b < batches; b++) await store.jobEnqueueMany({ jobs: Array.from({ length: 1_000 }, (_, i) => ({ name: 'noop', payload: payload(b * 1_000 + i) })) });
const ms = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
await stopProfile();
console.log(`in SQL (round trip included) ${(sqlMs / batches).toFixed(1)} ms per batch of 1,000; node CPU ${((cpu.user + cpu.system) / 1_000 / (batches * 1_000) * 1_000).toFixed(1)} µs/job`);
console.log(`${batches * 1_000} jobs in ${ms.toFixed(0)} ms: ${((batches * 1_000) / (ms / 1_000)).toFixed(0)} jobs/s (history ${store.historyPolicy})`);
await dataSource.destroy();
await db.drop();
await server.close();
await pgServer.stop();
