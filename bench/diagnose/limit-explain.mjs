// The effects bench's limit cell, with every slow statement's plan: auto_explain (nested
// statements included, so the effects trigger's statements show too) on the store's connections,
// its output sent to this client and printed. For finding where a slow limited claim spends its time.
// Usage: node bench/diagnose/limit-explain.mjs [--jobs 10000] [--cap 10000] [--keys 0] [--analyze] [--min-ms 30] [--plans 6]
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { DataSource } from 'typeorm';
import { PostgresJobStore } from '../../dist/lib/index.js';
import { postgres, schemaName } from '../support.mjs';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '10000' },
    cap: { type: 'string', default: '10000' },
    keys: { type: 'string', default: '0' },
    analyze: { type: 'boolean', default: false },
    'min-ms': { type: 'string', default: '30' },
    plans: { type: 'string', default: '6' },
  },
});
const JOBS = Number(values.jobs);
const KEYS = Number(values.keys);
const server = await postgres();
const explain = `-c session_preload_libraries=auto_explain -c auto_explain.log_min_duration=${values['min-ms']} -c auto_explain.log_analyze=on -c auto_explain.log_buffers=on -c auto_explain.log_nested_statements=on -c client_min_messages=log`;
const dataSource = await new DataSource({ type: 'postgres', url: server.url, extra: { max: 8, options: explain } }).initialize();
const plans = [];
const pool = dataSource.driver.master;
const listen = (client) => client.on('notice', (msg) => plans.length < Number(values.plans) && msg.message.includes('duration') && plans.push(msg.message));
pool.on('connect', listen);
for (const client of pool._clients ?? []) listen(client);
const schema = schemaName('explain');
const store = new PostgresJobStore({ dataSource, schema });
await store.migrate();
if (Number(values.cap) > 0) await store.concurrencyLimitSet({ target: { queue: 'default' }, max: Number(values.cap) });
for (let k = 0; k < KEYS; k++) await store.concurrencyLimitSet({ target: { key: `tenant-${k}` }, max: 10 });
for (let i = 0; i < JOBS; i += 1_000) {
  await store.jobEnqueueMany({ jobs: Array.from({ length: Math.min(1_000, JOBS - i) }, (_, j) => ({ name: 'noop', payload: null, ...(KEYS ? { concurrencyKey: `tenant-${(i + j) % KEYS}` } : {}) })) });
}
const t = store.naming;
if (values.analyze) await dataSource.query(`ANALYZE ${t.jobs}, ${t.slots}, ${t.limits}`);
plans.length = 0;
let done = 0;
const timings = { claim: [], complete: [] };
const started = performance.now();
await Promise.all(
  Array.from({ length: 4 }, async (_, i) => {
    while (done < JOBS) {
      let t0 = performance.now();
      const jobs = await store.jobClaim({ workerId: `w${i}`, limit: 50, queues: ['default'], leaseMs: 60_000 });
      timings.claim.push(performance.now() - t0);
      if (jobs.length === 0) {
        await new Promise((resolve) => setTimeout(resolve, 1));
        continue;
      }
      t0 = performance.now();
      await store.jobCompleteMany({ workerId: `w${i}`, outcomes: jobs.map((j) => ({ jobId: j.id, attempt: j.attempt, kind: 'succeeded' })) });
      timings.complete.push(performance.now() - t0);
      done += jobs.length;
    }
  }),
);
const rate = (JOBS / (performance.now() - started)) * 1_000;
const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]?.toFixed(1);
console.log(`${JOBS} jobs, cap ${values.cap}, ${KEYS} keys, ${values.analyze ? 'analyzed' : 'never analyzed'}: ${rate.toFixed(0)} jobs/s; median claim ${med(timings.claim)} ms, outcome write ${med(timings.complete)} ms`);
for (const plan of plans) console.log(`\n${plan}`);
await dataSource.query(`DROP SCHEMA ${schema} CASCADE`);
await dataSource.destroy();
await server.stop();
