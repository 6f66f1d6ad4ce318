/**
 * A store-level tour on the embedded default: a SQLite file under sample/data/, no server needed.
 * With DATABASE_URL set, the same tour runs on PostgreSQL. It enqueues jobs, claims them as a
 * worker would, and records outcomes through the fenced write, printing each step.
 */
import 'reflect-metadata';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DataSource } from 'typeorm';
import { DEFAULT_RETRY_POLICY, retryDelayMs, SeededRandom } from '../lib/core/index.js';
import { PostgresJobStore, SqliteJobStore, type JobStore } from '../lib/store/index.js';

const here = dirname(fileURLToPath(import.meta.url));
const url = process.env.DATABASE_URL;
const dataDir = join(here, '..', '..', 'sample', 'data');
if (!url) mkdirSync(dataDir, { recursive: true });

const dataSource = await new DataSource(
  url ? { type: 'postgres', url } : { type: 'better-sqlite3', database: join(dataDir, 'sample.db') },
).initialize();
const store: JobStore = url ? new PostgresJobStore({ dataSource }) : new SqliteJobStore({ dataSource });
await store.migrate();
console.log(`store: ${url ? 'PostgreSQL' : `SQLite at ${join(dataDir, 'sample.db')}`}`);

const { id } = await store.jobEnqueue({ name: 'orders.confirm', payload: { orderId: 'o-1' }, maxAttempts: 3 });
console.log(`enqueued ${id}`);

const random = new SeededRandom(1n);
for (let attempt = 1; attempt <= 3; attempt++) {
  const [job] = await store.jobClaim({ workerId: 'sample-worker', limit: 1, queues: ['default'], leaseMs: 30_000 });
  if (!job) {
    console.log('nothing due yet');
    break;
  }
  console.log(`claimed ${job.id}: attempt ${job.attempt} of ${job.maxAttempts}, occurrence ${job.occurrenceId}`);
  if (job.attempt < 3) {
    // Retry at once in this tour; a worker would wait retryDelayMs(attempt, policy, random).
    const wouldWait = retryDelayMs(job.attempt, DEFAULT_RETRY_POLICY, random);
    await store.jobCompleteMany({
      workerId: 'sample-worker',
      outcomes: [{ jobId: job.id, attempt: job.attempt, kind: 'failed', error: `flaky dependency (attempt ${job.attempt})`, retryDelayMs: 0 }],
    });
    console.log(`  failed; the retry policy would wait ${wouldWait} ms`);
  } else {
    const [result] = await store.jobCompleteMany({ workerId: 'sample-worker', outcomes: [{ jobId: job.id, attempt: job.attempt, kind: 'succeeded', output: { confirmed: true } }] });
    console.log(`  succeeded (${result?.status})`);
    const stale = await store.jobCompleteMany({ workerId: 'sample-worker', outcomes: [{ jobId: job.id, attempt: job.attempt, kind: 'succeeded' }] });
    console.log(`  the same report again is ${stale[0]?.status}: an outcome applies once`);
  }
}
const final = await store.jobGet(id);
console.log(`final state: ${final?.state}, attempts ${final?.attempt}, output ${JSON.stringify(final?.output)}`);
await dataSource.destroy();
