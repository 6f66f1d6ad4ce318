// One in-process drain of ours, for profiling: N jobs enqueued, then a WorkerNode drains them.
// Prints jobs/s, claims and outcome batches, and where PostgreSQL spent its time per statement kind.
// Usage: node [--cpu-prof] bench/diagnose/drain-profile.mjs [--jobs 20000] [--concurrency 50] [--batch 50]
import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import { PostgresJobStore } from '../../dist/lib/index.js';
import { FunctionInvoker, WorkerNode } from '../../dist/lib/worker/public-api.js';
import { Server } from '../peers/cell.mjs';
import { startProfile } from './cpu-profile.mjs';
import { postgres, postgresCpuMs } from '../support.mjs';
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
const kindOf = (text) => (text.includes('WITH paused AS') ? 'claim' : text.includes('AS r(id, attempt, kind') ? 'complete' : text.trim().split(/\s+/).slice(0, 3).join(' '));
const store = new PostgresJobStore({ dataSource, historyPolicy: process.env.HISTORY ?? undefined, onStatement: (text) => { const k = kindOf(text); kinds.set(k, (kinds.get(k) ?? 0) + 1); } });
// Claim sizes: how many each claim asked for and got, to see whether claims come in full batches.
const claimSizes = { asked: [], got: [] };
const claimOf = store.jobClaim.bind(store);
store.jobClaim = async (input) => {
  const jobs = await claimOf(input);
  claimSizes.asked.push(input.limit);
  claimSizes.got.push(jobs.length);
  return jobs;
};
// migrate() reinstalls the effects triggers, whose body follows this store's history policy.
await store.migrate();
for (let i = 0; i < JOBS; i += 1_000) await store.jobEnqueueMany({ jobs: Array.from({ length: 1_000 }, (_, j) => ({ name: 'noop', payload: { k: i + j, pad: 'x'.repeat(80) } })) });
await dataSource.query('ANALYZE');
// NOTRIGGER=1: drop the effects trigger, to see what the bare claim and outcome write cost (experiment only).
if (process.env.NOTRIGGER) await dataSource.query('DROP TRIGGER jobs_effects_update ON durable_scheduler.jobs');
// ABLATE='sql; sql': any other removal, e.g. 'DROP INDEX durable_scheduler.jobs_state_seq_idx' (experiment only).
if (process.env.ABLATE) await dataSource.query(process.env.ABLATE);
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
// NODES=n: n worker nodes in this process sharing the store (experiment: more claims in flight).
const nodes = Array.from({ length: Number(process.env.NODES ?? 1) }, () => new WorkerNode({ store, invoker, options: { scheduling: false, concurrency: Number(values.concurrency), claimBatchSize: Number(values.batch), ...(process.env.AHEAD ? { claimAhead: Number(process.env.AHEAD) } : {}) } }));
const node = { start: () => Promise.all(nodes.map((n) => n.start())), stop: () => Promise.all(nodes.map((n) => n.stop())) };
// PROFILE=file.cpuprofile: a CPU profile of the drain alone (the enqueue before it left out).
const stopProfile = await startProfile();
const t0 = performance.now();
const cpu0 = process.cpuUsage();
const pg0 = postgresCpuMs();
await node.start();
await finished;
await node.stop();
const ms = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
const pgCpuMs = pg0 === null ? null : postgresCpuMs() - pg0;
await stopProfile();
console.log(`${JOBS} jobs in ${ms.toFixed(0)} ms: ${(JOBS / (ms / 1000)).toFixed(0)} jobs/s; node CPU ${((cpu.user + cpu.system) / 1000 / JOBS).toFixed(3)} ms/job, PostgreSQL CPU ${pgCpuMs === null ? '– (server not on this machine)' : (pgCpuMs / JOBS).toFixed(3)} ms/job`);
console.log('statements:', Object.fromEntries(kinds));
const histogram = (xs) => { const buckets = { '1': 0, '2-9': 0, '10-49': 0, '50-99': 0, '100+': 0 }; for (const x of xs) buckets[x <= 1 ? '1' : x < 10 ? '2-9' : x < 50 ? '10-49' : x < 100 ? '50-99' : '100+'] += 1; return buckets; };
console.log('claims asked for:', histogram(claimSizes.asked), 'got:', histogram(claimSizes.got.filter((n) => n > 0)), 'empty:', claimSizes.got.filter((n) => n === 0).length);
console.log('ms per statement:', Object.fromEntries([...spent].map(([k, v]) => [k, +(v / kinds.get(k)).toFixed(2)])));
// PLANS=1: how each pooled connection planned the hot statements (generic plans reused, or custom
// plans made per execution), read from pg_prepared_statements on every connection of the pool.
if (process.env.PLANS) {
  const clients = await Promise.all(Array.from({ length: pool.totalCount }, () => pool.connect()));
  const plans = {};
  for (const client of clients) {
    const { rows } = await client.query(`SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements`);
    for (const row of rows) {
      const k = kindOf(row.statement);
      plans[k] ??= { generic: 0, custom: 0 };
      plans[k].generic += Number(row.generic_plans);
      plans[k].custom += Number(row.custom_plans);
    }
  }
  for (const client of clients) client.release();
  console.log('plans per statement kind:', plans);
}
await dataSource.destroy();
await db.drop();
await server.close();
await pgServer.stop();
