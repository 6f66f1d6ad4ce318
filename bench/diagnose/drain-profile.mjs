// One in-process drain of ours, for profiling: N jobs enqueued, then a WorkerNode drains them.
// Prints jobs/s, claims and outcome batches, and where PostgreSQL spent its time per statement kind.
// Usage: node [--cpu-prof] bench/diagnose/drain-profile.mjs [--jobs 20000] [--concurrency 50] [--batch 50]
import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import { FunctionInvoker, PostgresJobStore, WorkerNode } from '../../dist/lib/index.js';
import { Server } from '../peers/cell.mjs';
import { postgres } from '../support.mjs';
import ours from '../systems/ours.mjs';

const { values } = parseArgs({
  options: { jobs: { type: 'string', default: '20000' }, concurrency: { type: 'string', default: '50' }, batch: { type: 'string', default: '50' } },
});
const JOBS = Number(values.jobs);
const pgServer = await postgres();
const server = new Server(pgServer.url);
const db = await server.database(ours);
const dataSource = await new DataSource({ type: 'postgres', url: db.url, extra: { max: 10 } }).initialize();
const kinds = new Map();
const kindOf = (text) => (text.includes('WITH active AS') ? 'claim' : text.includes('AS r(id, attempt, kind') ? 'complete' : text.trim().split(/\s+/).slice(0, 3).join(' '));
const store = new PostgresJobStore({ dataSource, onStatement: (text) => { const k = kindOf(text); kinds.set(k, (kinds.get(k) ?? 0) + 1); } });
for (let i = 0; i < JOBS; i += 1_000) await store.jobEnqueueMany(Array.from({ length: 1_000 }, (_, j) => ({ name: 'noop', payload: { k: i + j, pad: 'x'.repeat(80) } })));
await dataSource.query('ANALYZE');
kinds.clear();
// Time each statement kind as the client sees it (round trip included).
const spent = new Map();
const pool = dataSource.driver.master;
const query = pool.query.bind(pool);
pool.query = async (config, ...rest) => {
  const t = performance.now();
  try {
    return await query(config, ...rest);
  } finally {
    const k = kindOf(config.text ?? config);
    spent.set(k, (spent.get(k) ?? 0) + performance.now() - t);
  }
};
let done = 0;
let finish;
const finished = new Promise((r) => (finish = r));
const invoker = new FunctionInvoker({ noop: { handle: () => { if (++done === JOBS) finish(); } } });
const node = new WorkerNode({ store, invoker, options: { scheduling: false, concurrency: Number(values.concurrency), claimBatchSize: Number(values.batch) } });
const t0 = performance.now();
const cpu0 = process.cpuUsage();
await node.start();
await finished;
await node.stop();
const ms = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
console.log(`${JOBS} jobs in ${ms.toFixed(0)} ms: ${(JOBS / (ms / 1000)).toFixed(0)} jobs/s; node CPU ${((cpu.user + cpu.system) / 1000 / JOBS).toFixed(3)} ms/job`);
console.log('statements:', Object.fromEntries(kinds));
console.log('ms per statement:', Object.fromEntries([...spent].map(([k, v]) => [k, +(v / kinds.get(k)).toFixed(2)])));
await dataSource.destroy();
await db.drop();
await server.close();
await pgServer.stop();
