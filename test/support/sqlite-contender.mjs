// One of several processes sharing a SQLite file as an application would: it enqueues inside its
// own transactions (read, enqueue through the manager, write) while its worker runs handlers that
// read and then write through the attempt's EntityManager. Imports the built package, as a real
// second process would. Prints "ready" on stderr once open, starts when the parent writes a line,
// and prints a JSON report on stdout once every process has enqueued all it meant to and no job is
// left to run.
import { createInterface } from 'node:readline';
import { DataSource } from 'typeorm';
import { SqliteJobStore } from '../../dist/lib/index.js';
import { FunctionInvoker, WorkerNode } from '../../dist/lib/worker/public-api.js';

const [database, workerId, countText, processesText] = process.argv.slice(2);
const count = Number(countText);
const processes = Number(processesText);
const dataSource = await new DataSource({ type: 'better-sqlite3', database }).initialize();
const store = new SqliteJobStore({ dataSource });
const logged = [];
const logger = { log() {}, debug() {}, warn: (line) => logged.push(line), error: (line) => logged.push(line) };
const invoker = new FunctionInvoker({
  'order.ledger': {
    transaction: true,
    handle: async (payload, ctx) => {
      const manager = ctx.entityManager();
      await manager.query('SELECT count(*) FROM ledger');
      await manager.query('INSERT INTO ledger (ref) VALUES (?)', [payload.ref]);
    },
  },
});
const node = new WorkerNode({ store, invoker, logger, options: { workerId, concurrency: 4, pollIntervalMs: 50, claimBatchSize: 8 } });

const lines = createInterface({ input: process.stdin });
const go = new Promise((resolve) => lines.once('line', resolve));
process.stderr.write('ready\n');
await go;
lines.close();
await node.start();

const enqueueErrors = [];
for (let i = 0; i < count; i++) {
  const ref = `${workerId}-${i}`;
  try {
    await dataSource.transaction(async (manager) => {
      await manager.query('SELECT count(*) FROM orders');
      await store.jobEnqueue({ job: { name: 'order.ledger', payload: { ref } }, manager });
      await manager.query('INSERT INTO orders (ref) VALUES (?)', [ref]);
    });
  } catch (error) {
    enqueueErrors.push(`${error?.constructor?.name}: ${error?.code ?? ''} ${error?.message}`);
  }
}

await dataSource.transaction((manager) => manager.query('INSERT INTO producers_done (worker) VALUES (?)', [workerId]));
for (;;) {
  const [{ done }] = await dataSource.query('SELECT count(*) AS done FROM producers_done');
  const stats = await store.jobStats();
  const open = stats.counts.filter((c) => c.state === 'scheduled' || c.state === 'running').reduce((sum, c) => sum + c.count, 0);
  if (done === processes && open === 0) break;
  await new Promise((resolve) => setTimeout(resolve, 50));
}
await node.stop();
await dataSource.destroy();
process.stdout.write(JSON.stringify({ enqueueErrors, logged, stats: node.stats }));
