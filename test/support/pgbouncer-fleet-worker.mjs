// One worker node of the PgBouncer fleet test (test/pgbouncer/fleet.pgbouncer.ts): a PostgreSQL
// store on a DataSource through PgBouncer in transaction mode, polling alone, whose handler writes
// a ledger row through the attempt's EntityManager, so the row commits only with the fenced success
// write. Imports the built package, as a real second process would. Prints "ready" on stderr once
// its worker runs; stops on SIGTERM.
import { DataSource } from 'typeorm';
import { PostgresJobStore } from '../../dist/lib/index.js';
import { FunctionInvoker, WorkerNode } from '../../dist/lib/worker/public-api.js';

const [url, schema, workerId] = process.argv.slice(2);
const dataSource = await new DataSource({ type: 'postgres', url, extra: { max: 8 } }).initialize();
const store = new PostgresJobStore({ dataSource, schema, poolMode: 'transaction' });
const invoker = new FunctionInvoker({
  'fleet.job': {
    transaction: true,
    handle: async (payload, ctx) => {
      await ctx.entityManager().query(`INSERT INTO "${schema}".ledger (job_id, attempt, worker) VALUES ($1, $2, $3)`, [ctx.jobId, ctx.attempt, workerId]);
      await new Promise((resolve) => setTimeout(resolve, payload.ms));
    },
  },
});
const quiet = { log() {}, debug() {}, warn() {}, error() {} };
const node = new WorkerNode({
  store,
  invoker,
  logger: quiet,
  // A lease of 5 s renewed every second: on two loaded cores a 2 s lease lapsed under running jobs.
  options: { workerId, concurrency: 4, pollIntervalMs: 100, leaseMs: 5_000, heartbeatIntervalMs: 1_000, scheduling: false, shutdownGraceMs: 2_000 },
});
await node.start();
process.stderr.write('ready\n');
process.on('SIGTERM', async () => {
  await node.stop();
  await store.close();
  await dataSource.destroy();
  process.exit(0);
});
