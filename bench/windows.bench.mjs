// What a debounce or throttle window costs on PostgreSQL (docs/debounce-and-throttle.md): single
// enqueues from LOOPS concurrent callers, each case on a fresh schema, rounds interleaved:
//   plain             no window (the baseline: one statement);
//   unique-new        a unique key per job, for comparison: the same lock and look-up as a window;
//   throttle-new      a throttle key per job, so every enqueue opens a window and writes a job;
//   throttle-dropped  one key for all, so all but the first are dropped inside the window;
//   debounce-new      a debounce key per job, so every enqueue writes a job;
//   debounce-same     one key per caller, so each enqueue rewrites that caller's pending job.
// A window adds a transaction around the key's lock and look-up; jobs without one pay nothing.
// Usage: node bench/windows.bench.mjs [--enqueues 4000] [--rounds 3]
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { PostgresJobStore } from '../dist/lib/index.js';
import { median, openDataSource, postgres, schemaName } from './support.mjs';

const { values } = parseArgs({ options: { enqueues: { type: 'string', default: '4000' }, rounds: { type: 'string', default: '3' } } });
const ENQUEUES = Number(values.enqueues);
const ROUNDS = Number(values.rounds);
const LOOPS = 8;
const WINDOW = 3_600_000;

const CASES = {
  plain: () => ({}),
  'unique-new': (loop, i) => ({ uniqueKey: `k${loop}:${i}` }),
  'throttle-new': (loop, i) => ({ throttle: { key: `k${loop}:${i}`, windowMs: WINDOW } }),
  'throttle-dropped': () => ({ throttle: { key: 'one', windowMs: WINDOW } }),
  'debounce-new': (loop, i) => ({ debounce: { key: `k${loop}:${i}`, windowMs: WINDOW } }),
  'debounce-same': (loop) => ({ debounce: { key: `k${loop}`, windowMs: WINDOW } }),
};

const server = await postgres();
const dataSource = await openDataSource(server.url, LOOPS + 2);
const schemas = [];

async function run(id) {
  await dataSource.query('CHECKPOINT');
  const schema = schemaName('win');
  schemas.push(schema);
  const store = new PostgresJobStore({ dataSource, schema });
  await store.migrate();
  const options = CASES[id];
  const perLoop = Math.ceil(ENQUEUES / LOOPS);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: LOOPS }, async (_, loop) => {
      for (let i = 0; i < perLoop; i++) await store.jobEnqueue({ job: { name: 'bench.window', payload: { loop, i }, ...options(loop, i) } });
    }),
  );
  const rate = (perLoop * LOOPS) / ((performance.now() - started) / 1000);
  const [{ n }] = await dataSource.query(`SELECT count(*)::int AS n FROM ${store.naming.jobs}`);
  return { rate, jobs: n };
}

const rates = {};
for (let round = 0; round < ROUNDS; round++) {
  for (const id of Object.keys(CASES)) {
    const { rate, jobs } = await run(id);
    (rates[id] ??= []).push(Math.round(rate));
    console.log(`  round ${round + 1} ${id}: ${Math.round(rate)} enqueues/s, ${jobs} jobs stored`);
  }
}
const plain = median(rates.plain);
for (const id of Object.keys(CASES)) {
  const m = median(rates[id]);
  console.log(`${id}: median ${m} enqueues/s (${rates[id].join(', ')}), ${id}/plain = ${(m / plain).toFixed(2)}`);
}
for (const schema of schemas) await dataSource.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
await dataSource.destroy();
await server.stop();
