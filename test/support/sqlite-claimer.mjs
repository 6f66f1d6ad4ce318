// A separate process that claims every job it can from a shared SQLite file and prints their ids.
// Used by the multi-process test; imports the built package, as a real second process would.
// It prints "ready" once open and starts claiming when the parent writes a line to its stdin, so
// all processes start together.
import { createInterface } from 'node:readline';
import { DataSource } from 'typeorm';
import { SqliteJobStore } from '../../dist/lib/index.js';

const [database, workerId] = process.argv.slice(2);
const dataSource = await new DataSource({ type: 'better-sqlite3', database }).initialize();
const store = new SqliteJobStore({ dataSource });
const lines = createInterface({ input: process.stdin });
const go = new Promise((resolve) => lines.once('line', resolve));
process.stderr.write('ready\n');
await go;
lines.close();
const claimed = [];
for (;;) {
  const jobs = await store.jobClaim({ workerId, limit: 7, queues: ['default'], leaseMs: 60_000 });
  if (jobs.length === 0) break;
  for (const job of jobs) claimed.push(job.id);
  await store.jobCompleteMany({ workerId, outcomes: jobs.map((job) => ({ jobId: job.id, attempt: job.attempt, kind: 'succeeded' })) });
}
await dataSource.destroy();
process.stdout.write(JSON.stringify(claimed));
