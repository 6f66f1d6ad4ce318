// Where a claim and an outcome write spend their time inside PostgreSQL, triggers included: claims N
// jobs and writes their outcomes, each under EXPLAIN ANALYZE, and prints the median execution time
// of each statement and of each trigger it fired, and the WAL it wrote per job.
// Usage: node bench/diagnose/statement-profile.mjs [--batch 200] [--rounds 10]
//   HISTORY=off: the store's history policy off (no history rows), to see what they cost.
import { parseArgs } from 'node:util';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { PostgresJobStore } from '../../dist/lib/index.js';
import { Server } from '../peers/cell.mjs';
import { median, postgres } from '../support.mjs';
import ours from '../systems/ours.mjs';

const { values } = parseArgs({ options: { batch: { type: 'string', default: '200' }, rounds: { type: 'string', default: '10' } } });
const [N, ROUNDS, WARM] = [Number(values.batch), Number(values.rounds), 2];
const pgServer = await postgres();
const server = new Server(pgServer.url);
const db = await server.database(ours);
const dataSource = await new DataSource({ type: 'postgres', url: db.url, extra: { max: 4 } }).initialize();
const texts = [];
const store = new PostgresJobStore({ dataSource, historyPolicy: process.env.HISTORY ?? undefined, onStatement: (text) => texts.push(text) });
// migrate() reinstalls the effects triggers, whose body follows this store's history policy.
await store.migrate();
const jobs = 2 * N * (ROUNDS + WARM);
for (let i = 0; i < jobs; i += 1_000) {
  await store.jobEnqueueMany({ jobs: Array.from({ length: Math.min(1_000, jobs - i) }, (_, j) => ({ name: 'noop', payload: { k: i + j, pad: 'x'.repeat(80) } })) });
}
await dataSource.query('ANALYZE');

const client = new pg.Client({ connectionString: db.url });
await client.connect();
const explain = async (text, params) => {
  await client.query('BEGIN');
  const { rows } = await client.query({ text: `EXPLAIN (ANALYZE, WAL, FORMAT JSON) ${text}`, values: params });
  await client.query('COMMIT');
  const plan = rows[0]['QUERY PLAN'][0];
  const triggers = {};
  for (const t of plan.Triggers ?? []) triggers[t['Trigger Name']] = (triggers[t['Trigger Name']] ?? 0) + t.Time;
  return { total: plan['Execution Time'], triggers, walPerJob: plan.Plan['WAL Bytes'] / N };
};
const seen = { claim: [], claimTriggers: [], claimWal: [], outcome: [], outcomeTriggers: [], outcomeWal: [] };
let claimText;
let outcomeText;
for (let round = 0; round < ROUNDS + WARM; round++) {
  // The store's own calls supply the statement texts (and lease one batch); the explained
  // statements then claim the next batch and write that batch's outcomes.
  texts.length = 0;
  const leased = await store.jobClaim({ workerId: 'w', limit: N, queues: ['default'], leaseMs: 60_000 });
  claimText ??= texts.find((text) => text.includes('WITH paused AS'));
  const claim = await explain(claimText, ['x', N, 60_000, true]);
  await store.jobCompleteMany({ workerId: 'w', outcomes: leased.map((j) => ({ jobId: j.id, attempt: j.attempt, kind: 'succeeded' })) });
  outcomeText ??= texts.find((text) => text.includes('AS r(id, attempt, kind'));
  const running = await dataSource.query(`SELECT id, attempt FROM durable_scheduler.jobs WHERE state = 'running' AND worker_id = 'x'`);
  const nulls = running.map(() => null);
  const outcome = await explain(outcomeText, ['x', running.map((r) => r.id), running.map((r) => r.attempt), running.map(() => 'succeeded'), nulls, nulls, nulls]);
  if (round < WARM) continue;
  seen.claim.push(claim.total);
  seen.claimTriggers.push(claim.triggers);
  seen.claimWal.push(claim.walPerJob);
  seen.outcome.push(outcome.total);
  seen.outcomeTriggers.push(outcome.triggers);
  seen.outcomeWal.push(outcome.walPerJob);
}
const ms = (key) => `${median(seen[key]).toFixed(2)} ms`;
const triggers = (key) =>
  [...new Set(seen[key].flatMap(Object.keys))].sort().map((name) => `${name} ${median(seen[key].map((t) => t[name] ?? 0)).toFixed(2)} ms`).join(', ');
console.log(`claim of ${N}: ${ms('claim')}, of which triggers: ${triggers('claimTriggers')}; WAL ${median(seen.claimWal).toFixed(0)} bytes per job`);
console.log(`outcome write of ${N}: ${ms('outcome')}, of which triggers: ${triggers('outcomeTriggers')}; WAL ${median(seen.outcomeWal).toFixed(0)} bytes per job`);
// PLAN=1: one more claim and outcome write, with their plans in text form.
if (process.env.PLAN) {
  await store.jobEnqueueMany({ jobs: Array.from({ length: N }, (_, k) => ({ name: 'noop', payload: { k, pad: 'x'.repeat(80) } })) });
  const show = async (text, params) => {
    await client.query('BEGIN');
    const { rows } = await client.query({ text: `EXPLAIN (ANALYZE, BUFFERS) ${text}`, values: params });
    await client.query('ROLLBACK');
    console.log(rows.map((r) => r['QUERY PLAN']).join('\n'));
  };
  await show(claimText, ['x', N, 60_000, true]);
  const leased = await store.jobClaim({ workerId: 'x', limit: N, queues: ['default'], leaseMs: 60_000 });
  const nulls = leased.map(() => null);
  await show(outcomeText, ['x', leased.map((j) => j.id), leased.map((j) => j.attempt), leased.map(() => 'succeeded'), nulls, nulls, nulls]);
}
await client.end();
await dataSource.destroy();
await db.drop();
await server.close();
await pgServer.stop();
