// Where our drain time goes: one WorkerNode in this process, every store call timed and counted,
// so the report can say how many round trips and how much CPU a job costs, and how big claims are.
// Usage: node bench/diagnose/ours-round-trips.mjs [--jobs 3000] [--concurrency 50] [--batch 50]
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import { PostgresJobStore } from '../../dist/lib/index.js';
import { FunctionInvoker, WorkerNode } from '../../dist/lib/worker/public-api.js';
import { Server } from '../peers/cell.mjs';
import { postgres } from '../support.mjs';
import ours from '../systems/ours.mjs';

const { values } = parseArgs({ options: { jobs: { type: 'string', default: '3000' }, concurrency: { type: 'string', default: '50' }, batch: { type: 'string', default: '50' } } });
const JOBS = Number(values.jobs);
const pgServer = await postgres();
const server = new Server(pgServer.url);
const db = await server.database(ours);
const dataSource = await new DataSource({ type: 'postgres', url: db.url, extra: { max: 10 } }).initialize();
const statements = new Map();
const store = new PostgresJobStore({ dataSource, onStatement: (text) => {
  const key = text.replace(/\s+/g, ' ').slice(0, 60);
  statements.set(key, (statements.get(key) ?? 0) + 1);
} });
for (let i = 0; i < JOBS; i += 1_000) await store.jobEnqueueMany({ jobs: Array.from({ length: Math.min(1_000, JOBS - i) }, (_, j) => ({ name: 'noop', payload: { k: i + j, pad: 'x'.repeat(84) } })) });
statements.clear();

// Time every store call the worker makes, by method.
const calls = {};
for (const method of ['jobClaim', 'jobCompleteMany', 'jobHeartbeat']) {
  const original = store[method].bind(store);
  calls[method] = { n: 0, ms: 0, rows: 0 };
  store[method] = async (params) => {
    const t = performance.now();
    const result = await original(params);
    calls[method].n += 1;
    calls[method].ms += performance.now() - t;
    calls[method].rows += method === 'jobClaim' ? result.length : (params.outcomes?.length ?? 0);
    return result;
  };
}
let done = 0;
let resolveDone;
const finished = new Promise((resolve) => (resolveDone = resolve));
const node = new WorkerNode({
  store,
  invoker: new FunctionInvoker({ noop: { handle: () => undefined } }),
  options: { concurrency: Number(values.concurrency), claimBatchSize: Number(values.batch), scheduling: false },
});
node.events.on('settled', () => ++done === JOBS && resolveDone());
const cpu0 = process.cpuUsage();
const t0 = performance.now();
await node.start();
await finished;
const ms = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
await node.stop();
console.log(`${JOBS} jobs, concurrency ${values.concurrency}, claimBatchSize ${values.batch}: ${Math.round((JOBS / ms) * 1_000)} jobs/s`);
console.log(`process CPU ${((cpu.user + cpu.system) / 1_000 / JOBS).toFixed(3)} ms/job (${Math.round(((cpu.user + cpu.system) / 1_000 / ms) * 100)}% of one core)`);
for (const [m, c] of Object.entries(calls)) {
  if (c.n) console.log(`${m}: ${c.n} calls (${(c.n / JOBS).toFixed(3)} per job), ${(c.rows / c.n).toFixed(1)} jobs per call, ${(c.ms / c.n).toFixed(2)} ms per call`);
}
const total = [...statements.values()].reduce((a, b) => a + b, 0);
console.log(`statements sent: ${total} (${(total / JOBS).toFixed(3)} per job)`);
for (const [k, n] of [...statements].sort((a, b) => b[1] - a[1]).slice(0, 8)) console.log(`  ${n}  ${k}`);
await dataSource.destroy();
await db.drop();
await server.close();
await pgServer.stop();
