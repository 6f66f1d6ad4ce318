// The claim's plan mid-drain: N jobs enqueued, half of them claimed and succeeded, then
// EXPLAIN (ANALYZE, BUFFERS) of the next claim of `limit` (rolled back). Shows whether a claim's
// cost grows with the finished rows left in the table.
// Usage: node bench/diagnose/claim-plan.mjs [--jobs 20000] [--limit 10] [--analyze]
import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import { PostgresJobStore } from '../../dist/lib/index.js';
import { Server } from '../peers/cell.mjs';
import { postgres } from '../support.mjs';
import ours from '../systems/ours.mjs';

const { values } = parseArgs({
  options: { jobs: { type: 'string', default: '20000' }, limit: { type: 'string', default: '10' }, analyze: { type: 'boolean', default: false } },
});
const JOBS = Number(values.jobs);
const pgServer = await postgres();
const server = new Server(pgServer.url);
const db = await server.database(ours);
const dataSource = await new DataSource({ type: 'postgres', url: db.url, extra: { max: 4 } }).initialize();
let claimText = '';
const store = new PostgresJobStore({ dataSource, onStatement: (text) => text.includes('WITH paused AS') && (claimText = text) });
for (let i = 0; i < JOBS; i += 1_000) await store.jobEnqueueMany({ jobs: Array.from({ length: 1_000 }, (_, j) => ({ name: 'noop', payload: { k: i + j } })) });
for (let done = 0; done < JOBS / 2; ) {
  const jobs = await store.jobClaim({ workerId: 'w', limit: 500, queues: ['default'], leaseMs: 60_000 });
  await store.jobCompleteMany({ workerId: 'w', outcomes: jobs.map((j) => ({ jobId: j.id, attempt: j.attempt, kind: 'succeeded' })) });
  done += jobs.length;
}
// --analyze: as if autovacuum had analyzed the table since the jobs arrived.
if (values.analyze) await dataSource.query('ANALYZE durable_scheduler.jobs');
const runner = dataSource.createQueryRunner();
await runner.startTransaction();
const plan = await runner.query(`EXPLAIN (ANALYZE, BUFFERS) ${claimText}`, ['w', Number(values.limit), 60_000, true]);
await runner.rollbackTransaction();
await runner.release();
console.log(`${JOBS} jobs, ${JOBS / 2} succeeded${values.analyze ? ', analyzed' : ''}; claim of ${values.limit}:`);
console.log(plan.map((r) => r['QUERY PLAN']).join('\n'));
await dataSource.destroy();
await db.drop();
await server.close();
await pgServer.stop();
