// Where a drain's wall time goes, in process: how long the node had 0, 1 or 2 store calls in
// flight, what each call carried, and how busy Node's event loop was. A drain that alternates
// between Node and PostgreSQL shows up as time with no call in flight while the loop is busy.
// Usage: node bench/diagnose/drain-timeline.mjs [--jobs 30000] [--concurrency 10] [--batch 200] [--ahead 500] [--async]
//   [--keys K --cap N: the jobs spread over K concurrency keys, each capped at N] [--queue-cap N] [--rounds R]
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { DataSource } from 'typeorm';
import { PostgresJobStore } from '../../dist/lib/index.js';
import { FunctionInvoker, WorkerNode } from '../../dist/lib/worker/public-api.js';
import { Server } from '../peers/cell.mjs';
import { postgres, postgresCpuMs } from '../support.mjs';
import ours from '../systems/ours.mjs';
import { startProfile } from './cpu-profile.mjs';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '30000' },
    concurrency: { type: 'string', default: '10' },
    batch: { type: 'string' },
    ahead: { type: 'string' },
    async: { type: 'boolean', default: false },
    'no-carry': { type: 'boolean', default: false },
    rounds: { type: 'string', default: '1' },
    keys: { type: 'string', default: '0' },
    cap: { type: 'string', default: '10' },
    'queue-cap': { type: 'string' },
  },
});
const JOBS = Number(values.jobs);
const pgServer = await postgres();
const server = new Server(pgServer.url);

async function round() {
  const db = await server.database(ours);
  const dataSource = await new DataSource({ type: 'postgres', url: db.url, extra: { max: 10 } }).initialize();
  const store = new PostgresJobStore({ dataSource, ...(values.async ? { asyncClaimCommit: true } : {}) });
  await store.migrate();
  // --no-carry: outcomes in writes of their own beside the claims, as with asyncClaimCommit (experiment).
  if (values['no-carry']) store.jobCompleteAndClaim = undefined;
  const keys = Number(values.keys);
  for (let k = 0; k < keys; k += 1) await store.concurrencyLimitSet({ target: { key: `k${k}` }, max: Number(values.cap) });
  if (values['queue-cap']) await store.concurrencyLimitSet({ target: { queue: 'default' }, max: Number(values['queue-cap']) });
  const key = (n) => (keys > 0 ? { concurrencyKey: `k${n % keys}` } : {});
  for (let i = 0; i < JOBS; i += 1_000) await store.jobEnqueueMany({ jobs: Array.from({ length: 1_000 }, (_, j) => ({ name: 'noop', payload: { k: i + j, pad: 'x'.repeat(80) }, ...key(i + j) })) });
  await dataSource.query('ANALYZE');

  let inFlight = 0;
  let last = 0;
  const spans = [0, 0, 0, 0];
  // Time with a claim in flight and with an outcome write in flight, each on its own.
  const busy = { claim: 0, write: 0 };
  const open = { claim: 0, write: 0 };
  const calls = new Map();
  const mark = () => {
    const now = performance.now();
    spans[Math.min(inFlight, 3)] += now - last;
    if (open.claim > 0) busy.claim += now - last;
    if (open.write > 0) busy.write += now - last;
    last = now;
  };
  const wrap = (name, carried) => {
    const original = store[name]?.bind(store);
    if (!original) return;
    const kind = name === 'jobCompleteMany' ? 'write' : 'claim';
    store[name] = async (input) => {
      mark();
      inFlight += 1;
      open[kind] += 1;
      const t = performance.now();
      try {
        return await original(input);
      } finally {
        mark();
        inFlight -= 1;
        open[kind] -= 1;
        const c = calls.get(name) ?? { n: 0, ms: 0, outcomes: 0, limit: 0, got: 0 };
        c.n += 1;
        c.ms += performance.now() - t;
        const k = carried(input);
        c.outcomes += k.outcomes;
        c.limit += k.limit;
        calls.set(name, c);
      }
    };
  };
  wrap('jobClaim', (i) => ({ outcomes: 0, limit: i.limit }));
  wrap('jobCompleteAndClaim', (i) => ({ outcomes: i.outcomes.length, limit: i.claim.limit }));
  wrap('jobCompleteMany', (i) => ({ outcomes: i.outcomes.length, limit: 0 }));

  let done = 0;
  let finish;
  const finished = new Promise((r) => (finish = r));
  const invoker = new FunctionInvoker({ noop: { handle: () => { if (++done === JOBS) finish(); } } });
  const options = { scheduling: false, concurrency: Number(values.concurrency) };
  if (values.batch) options.claimBatchSize = Number(values.batch);
  if (values.ahead) options.claimAhead = Number(values.ahead);
  const node = new WorkerNode({ store, invoker, options });
  // PROFILE=file.cpuprofile: a CPU profile of the drain alone.
  const stopProfile = await startProfile();
  const elu0 = performance.eventLoopUtilization();
  const cpu0 = process.cpuUsage();
  const pg0 = postgresCpuMs();
  const t0 = performance.now();
  last = t0;
  await node.start();
  await finished;
  mark();
  const ms = performance.now() - t0;
  const elu = performance.eventLoopUtilization(elu0);
  const cpu = process.cpuUsage(cpu0);
  const pgMs = pg0 === null ? null : postgresCpuMs() - pg0;
  await stopProfile();
  await node.stop();
  const pct = (x) => `${((100 * x) / ms).toFixed(0)} %`;
  console.log(`${JOBS} jobs in ${ms.toFixed(0)} ms: ${Math.round(JOBS / (ms / 1000))} jobs/s; node CPU ${((cpu.user + cpu.system) / 1000 / JOBS).toFixed(3)} ms/job, PostgreSQL CPU ${pgMs === null ? '–' : (pgMs / JOBS).toFixed(3)} ms/job, event loop busy ${(100 * elu.utilization).toFixed(0)} %`);
  console.log(`  store calls in flight: none ${pct(spans[0])}, one ${pct(spans[1])}, two ${pct(spans[2])}, more ${pct(spans[3])}; a claim ${pct(busy.claim)}, an outcome write ${pct(busy.write)}`);
  for (const [name, c] of calls) console.log(`  ${name}: ${c.n} calls, ${(c.ms / c.n).toFixed(2)} ms each, ${(c.outcomes / c.n).toFixed(0)} outcomes and a claim of ${(c.limit / c.n).toFixed(0)} per call`);
  await dataSource.destroy();
  await db.drop();
}

for (let r = 0; r < Number(values.rounds); r += 1) await round();
await server.close();
await pgServer.stop();
