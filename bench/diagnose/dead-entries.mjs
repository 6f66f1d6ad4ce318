// How a claim slows down as finished jobs pile up between vacuums: drains N jobs (serial claims
// and outcome writes of 200, 1 s leases), waits until every lease has passed, enqueues 400 more,
// and runs one claim under EXPLAIN ANALYZE, printing the time and buffers of its `due` scan (the
// claim index, whose entries for claimed jobs stay until vacuum) and its `lapsed` scan (the lease
// index, whose entries for finished jobs' running versions stay too). Meant for a server with
// autovacuum off, or run faster than autovacuum wakes. Each point runs the claim without and with
// the lapsed search (rolled back), as a worker sends it between poll ticks and on one.
// Usage: DATABASE_URL=… node bench/diagnose/dead-entries.mjs [--no-analyze]
import pg from 'pg';
import { DataSource } from 'typeorm';
import { PostgresJobStore } from '../../dist/lib/index.js';
import { payload, Server } from '../peers/cell.mjs';
import { postgres } from '../support.mjs';
import ours from '../systems/ours.mjs';
const analyze = !process.argv.includes('--no-analyze');
const pgServer = await postgres();
const server = new Server(pgServer.url);
const db = await server.database(ours);
const dataSource = await new DataSource({ type: 'postgres', url: db.url, extra: { max: 2 } }).initialize();
let claimText;
const store = new PostgresJobStore({ dataSource, asyncClaimCommit: true, onStatement: (t) => t.includes('WITH paused AS') && (claimText ??= t) });
await store.migrate();
const client = new pg.Client({ connectionString: db.url });
/** Claims and succeeds everything due, 200 at a time. */
async function drainAll() {
  for (;;) {
    const jobs = await store.jobClaim({ workerId: 'w', limit: 200, queues: ['default'], leaseMs: 1000 });
    if (!jobs.length) return;
    await store.jobCompleteMany({ workerId: 'w', outcomes: jobs.map((j) => ({ jobId: j.id, attempt: j.attempt, kind: 'succeeded' })) });
  }
}
await client.connect();
for (const total of [0, 50_000, 100_000, 200_000]) {
  // drain up to `total` jobs so far
  const have = (await client.query(`SELECT count(*)::int n FROM ${store.naming.table('jobs')}`)).rows[0].n;
  for (let i = have; i < total; i += 1000) await store.jobEnqueueMany({ jobs: Array.from({ length: 1000 }, (_, j) => ({ name: 'noop', payload: payload(i + j) })) });
  await drainAll();
  await new Promise((r) => setTimeout(r, 1200)); // every lease passed
  await store.jobEnqueueMany({ jobs: Array.from({ length: 400 }, (_, j) => ({ name: 'noop', payload: payload(j) })) });
  if (!claimText) await store.jobClaim({ workerId: 'w', limit: 1, queues: ['default'], leaseMs: 1000 });
  // Statistics as autovacuum's analyze keeps them (it runs far more often than its vacuum here):
  // without them the planner reads the claim index as a bitmap, which never marks dead entries.
  if (analyze) await client.query(`ANALYZE ${store.naming.table('jobs')}`);
  await client.query('DEALLOCATE ALL');
  await client.query(`PREPARE c(text, int, int, boolean) AS ${claimText}`);
  // A worker's claim between poll ticks leaves lapsed leases out; the claim on a tick searches them.
  for (const includeLapsed of [false, true]) {
    await client.query('BEGIN');
    const { rows } = await client.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE c('x', 200, 30000, ${includeLapsed})`);
    await client.query('ROLLBACK');
    const plan = rows[0]['QUERY PLAN'][0];
    const find = (n, name, out = []) => { if (n['Subplan Name'] === name || n['CTE Name'] === name) out.push(n); for (const c of n.Plans ?? []) find(c, name, out); return out; };
    const cte = (name) => { const n = find(plan.Plan, `CTE ${name}`)[0]; return !n ? '?' : n['Actual Loops'] === 0 ? 'not run' : `${n['Actual Total Time'].toFixed(2)} ms, ${n['Shared Hit Blocks']} buffers`; };
    console.log(`after ${total} jobs drained, ${includeLapsed ? 'with' : 'without'} lapsed: claim ${plan['Execution Time'].toFixed(2)} ms; due ${cte('due')}; lapsed ${cte('lapsed')}`);
  }
  // finish those 200 (+200 left)
  await drainAll();
}
await client.end(); await dataSource.destroy(); await db.drop(); await server.close(); await pgServer.stop();
