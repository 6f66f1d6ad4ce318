// Where idle latency goes: one job at a time, enqueue commit → wake-up hint → claim sent → claim
// back → handler start, on one in-process WorkerNode. Prints the median of each step.
// Usage: node bench/diagnose/latency-profile.mjs [--jobs 300] [--concurrency 200] [--async-claim-commit]
//   --async-claim-commit: the store option the bench's tuned cells use (claims skip their WAL flush).
import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import { PostgresJobStore } from '../../dist/lib/index.js';
import { FunctionInvoker, WorkerNode } from '../../dist/lib/worker/public-api.js';
import { payload, Server } from '../peers/cell.mjs';
import { median, postgres } from '../support.mjs';
import ours from '../systems/ours.mjs';

const { values } = parseArgs({ options: { jobs: { type: 'string', default: '300' }, concurrency: { type: 'string', default: '200' }, 'async-claim-commit': { type: 'boolean', default: false } } });
const pgServer = await postgres();
const server = new Server(pgServer.url);
const db = await server.database(ours);
const dataSource = await new DataSource({ type: 'postgres', url: db.url, extra: { max: 10 } }).initialize();
let mark = {};
const store = new PostgresJobStore({ dataSource, asyncClaimCommit: values['async-claim-commit'], onStatement: (text) => text.includes('WITH paused AS') && (mark.claimSent ??= performance.now()) });
await store.migrate();
const claim = store.jobClaim.bind(store);
store.jobClaim = async (params) => {
  const jobs = await claim(params);
  if (jobs.length > 0) mark.claimBack ??= performance.now();
  return jobs;
};
let started;
const invoker = new FunctionInvoker({ noop: { handle: () => started?.(performance.now()) } });
const node = new WorkerNode({ store, invoker, options: { scheduling: false, concurrency: Number(values.concurrency), claimBatchSize: Number(values.concurrency) } });
await node.start();
const sub = await store.subscribeWakeHints({ listener: () => (mark.hint ??= performance.now()) });
const steps = { hint: [], claimSent: [], claimBack: [], start: [] };
for (let i = 0; i < Number(values.jobs); i++) {
  mark = {};
  const handled = new Promise((resolve) => (started = resolve));
  await store.jobEnqueue({ job: { name: 'noop', payload: payload(i) } });
  const t0 = performance.now();
  const at = await handled;
  for (const [k, v] of Object.entries({ hint: mark.hint, claimSent: mark.claimSent, claimBack: mark.claimBack, start: at })) if (v !== undefined) steps[k].push(v - t0);
  await new Promise((r) => setTimeout(r, 5));
}
// Which plans the claim statement ran with, on each pooled connection (custom plans are planned per call).
const held = await Promise.all(Array.from({ length: dataSource.driver.master.totalCount }, () => dataSource.driver.master.connect()));
for (const client of held) {
  const { rows } = await client.query(`SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE '%WITH paused AS%'`);
  if (rows.length) console.log('claim plans on one connection:', rows);
  client.release();
}
console.log(Object.fromEntries(Object.entries(steps).map(([k, v]) => [k, `${median(v).toFixed(2)} ms (n=${v.length})`])));
await sub.close();
await node.stop();
await dataSource.destroy();
await db.drop();
await server.close();
await pgServer.stop();
