// Whether PostgreSQL reuses a generic plan for the store's hot statements or plans each execution
// anew (a custom plan costs the planning time every time): runs claims and outcome writes on a
// one-connection pool, then reads pg_prepared_statements on that connection.
// Usage: node bench/diagnose/plan-cache.mjs [--rounds 50] [--batch 1]
import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import { PostgresJobStore } from '../../dist/lib/index.js';
import { Server } from '../peers/cell.mjs';
import { postgres } from '../support.mjs';
import ours from '../systems/ours.mjs';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '50' }, batch: { type: 'string', default: '1' } } });
const pgServer = await postgres();
const server = new Server(pgServer.url);
const db = await server.database(ours);
const dataSource = await new DataSource({ type: 'postgres', url: db.url, extra: { max: 1 } }).initialize();
const store = new PostgresJobStore({ dataSource, asyncClaimCommit: true });
await store.migrate();
const N = Number(values.batch);
for (let i = 0; i < Number(values.rounds); i++) {
  await store.jobEnqueueMany({ jobs: Array.from({ length: N }, (_, k) => ({ name: 'noop', payload: { k } })) });
  const jobs = await store.jobClaim({ workerId: 'w', limit: 200, queues: ['default'], leaseMs: 60_000 });
  await store.jobCompleteMany({ workerId: 'w', outcomes: jobs.map((j) => ({ jobId: j.id, attempt: j.attempt, kind: 'succeeded' })) });
}
const rows = await dataSource.query(`SELECT left(regexp_replace(statement, '\\s+', ' ', 'g'), 60) AS statement, generic_plans, custom_plans FROM pg_prepared_statements ORDER BY custom_plans DESC`);
console.table(rows);
await dataSource.destroy();
await db.drop();
await server.close();
await pgServer.stop();
