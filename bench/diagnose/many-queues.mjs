// Whether a claim costs more when a worker serves many queues: --jobs jobs spread evenly over
// --queues queues, drained by one in-process WorkerNode serving all of them, against the same jobs in
// one queue. Rounds interleave the two cells; prints each drain, the medians and their ratio, and
// how the pool's connections planned the claim (generic plans are reused, custom ones planned anew
// at every claim; a connection the pool closed while idle takes its counts with it).
// --lib names the built library to measure (a dist/ directory), so a build of another checkout can
// be run the same way; each cell drains a fresh schema of the DATABASE_URL database (or an embedded
// server's).
// Usage: node bench/diagnose/many-queues.mjs [--lib dist] [--jobs 100000] [--queues 1000] [--rounds 3]
//          [--concurrency 200] [--batch 200] [--only many|one] [--sync-claim-commit]
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import { median, postgres } from '../support.mjs';

const { values } = parseArgs({
  options: {
    lib: { type: 'string', default: new URL('../../dist', import.meta.url).pathname },
    jobs: { type: 'string', default: '100000' },
    queues: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '200' },
    batch: { type: 'string', default: '200' },
    only: { type: 'string' },
    'sync-claim-commit': { type: 'boolean', default: false },
  },
});
const JOBS = Number(values.jobs);
const QUEUES = Number(values.queues);
const lib = pathToFileURL(resolve(values.lib)).href;
const { PostgresJobStore } = await import(`${lib}/lib/index.js`);
const { FunctionInvoker, WorkerNode } = await import(`${lib}/lib/worker/public-api.js`);

const pgServer = await postgres();

/** Counts how the pool's connections planned the claim: each prepares it once and keeps its plans. */
async function claimPlans(pool) {
  const clients = await Promise.all(Array.from({ length: pool.totalCount }, () => pool.connect()));
  const plans = { generic: 0, custom: 0 };
  try {
    for (const client of clients) {
      const { rows } = await client.query(`SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE '%FOR NO KEY UPDATE OF j SKIP LOCKED%'`);
      for (const row of rows) {
        plans.generic += Number(row.generic_plans);
        plans.custom += Number(row.custom_plans);
      }
    }
  } finally {
    for (const client of clients) client.release();
  }
  return plans;
}

/** One drain: a fresh schema and pool, the jobs over `queues` queues, one worker serving them all. */
async function drain(queues) {
  const dataSource = await new DataSource({ type: 'postgres', url: pgServer.url, extra: { max: 10 } }).initialize();
  const schema = `many_queues_${randomBytes(4).toString('hex')}`;
  const store = new PostgresJobStore({ dataSource, schema, asyncClaimCommit: !values['sync-claim-commit'] });
  await store.migrate();
  const names = Array.from({ length: queues }, (_, k) => `q${k}`);
  for (let i = 0; i < JOBS; i += 1_000) {
    const jobs = Array.from({ length: Math.min(1_000, JOBS - i) }, (_, j) => ({ name: 'noop', queue: names[(i + j) % queues], payload: { k: i + j } }));
    await store.jobEnqueueMany({ jobs });
  }
  await dataSource.query(`ANALYZE "${schema}".jobs`);
  let done = 0;
  let finish;
  const finished = new Promise((r) => (finish = r));
  const invoker = new FunctionInvoker({ noop: { handle: () => void (++done === JOBS && finish()) } });
  const node = new WorkerNode({
    store,
    invoker,
    options: { queues: names, concurrency: Number(values.concurrency), claimBatchSize: Number(values.batch), scheduling: false, shutdownGraceMs: 1_000 },
  });
  const t0 = performance.now();
  await node.start();
  await finished;
  const ms = performance.now() - t0;
  await node.stop();
  const plans = await claimPlans(dataSource.driver.master);
  await store.close();
  await dataSource.query(`DROP SCHEMA "${schema}" CASCADE`);
  await dataSource.destroy();
  return { rate: JOBS / (ms / 1_000), plans };
}

const cells = [
  { id: 'one', queues: 1 },
  { id: 'many', queues: QUEUES },
].filter((cell) => !values.only || values.only === cell.id);
const rates = Object.fromEntries(cells.map((cell) => [cell.id, []]));
console.log(`${values.lib}: ${JOBS} jobs, concurrency ${values.concurrency}, claimBatchSize ${values.batch}, asyncClaimCommit ${!values['sync-claim-commit']}, ${pgServer.label}`);
for (let round = 0; round < Number(values.rounds); round++) {
  for (const cell of cells) {
    const { rate, plans } = await drain(cell.queues);
    rates[cell.id].push(rate);
    console.log(`  round ${round + 1}, ${cell.queues} queue${cell.queues === 1 ? '' : 's'}: ${Math.round(rate)} jobs/s (claim plans: ${plans.generic} generic, ${plans.custom} custom)`);
  }
}
for (const cell of cells) console.log(`${cell.queues} queue${cell.queues === 1 ? '' : 's'}: median ${Math.round(median(rates[cell.id]))} jobs/s (${rates[cell.id].map(Math.round).join(', ')})`);
if (cells.length === 2) console.log(`ratio ${QUEUES} queues / 1 queue: ${(median(rates.many) / median(rates.one)).toFixed(2)}`);
await pgServer.stop();
