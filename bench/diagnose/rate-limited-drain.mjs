// Rate limits under a drain: whether the tuned worker (ours-tuned, c = 200, in --processes worker
// processes that race for the same starts) reaches a rate limit and never overshoots it. Each case
// prefills due jobs in one queue and runs the workers for --seconds (plus a window, so the last one
// is complete), then reads every start from
// job_history (state 'running', stamped with the claim's now(), the clock the limit is enforced on).
//   queue  one queue with a queue rate limit (store.rateLimitSet), one case per --rates entry;
//   keys   the jobs spread over --keys concurrency keys, each declaring its own rate at enqueue
//          (`rateLimit` beside `concurrencyKey`), one case per --key-rates entry.
// It prints, per case: achieved starts/s over a whole number of windows from the first start
// against the limit's rate (ratio; 1.00 reaches the limit; a whole window's starts count, so a claim
// that comes a little late still fills it), the sustained rate over every start after the first
// window's (the starts past the first max, over the time from the first start to the last: a late
// claim shows here), the busiest window over every window
// that begins at a start, divided by max (≤ 1.00: no overshoot), and where the time between
// windows goes: a start row frees perMs after its stamp, and `lag` is how long after that the
// claim that reused it came (median and p90), over the distinct claims seen. A reference drain of
// the same jobs with no limit gives the worker's own jobs/s, so the ratio shows the limit, not the
// worker, is what holds the drain back. --poll sets the worker's pollIntervalMs (default: its own,
// 1 s). Cells run one at a time, each on a fresh database of the server (DATABASE_URL, or the
// embedded PostgreSQL); --runs repeats every case, interleaved.
// Usage: node bench/diagnose/rate-limited-drain.mjs [--rates 100/1000] [--key-rates 10/1000]
//   [--keys 10] [--processes 2] [--jobs 20000] [--seconds 5] [--poll ms] [--runs 1]
//   [--no-reference] [--trace (print one group's claims: ms after its first start, starts)]
// Rates are max/perMs, comma-separated; an empty list skips that shape (--key-rates ''). With
// BENCH_DATABASE set, every cell uses that one database (bench/peers/cell.mjs).
import { parseArgs } from 'node:util';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { PostgresJobStore } from '../../dist/lib/index.js';
import { headline, systems, variants } from '../systems/index.mjs';
import { Server, now, payload, startWorkers, until } from '../peers/cell.mjs';
import { fmt, median, postgres } from '../support.mjs';

const { values } = parseArgs({
  options: {
    rates: { type: 'string', default: '100/1000' },
    'key-rates': { type: 'string', default: '10/1000' },
    keys: { type: 'string', default: '10' },
    processes: { type: 'string', default: '2' },
    jobs: { type: 'string', default: '20000' },
    seconds: { type: 'string', default: '5' },
    poll: { type: 'string' },
    runs: { type: 'string', default: '1' },
    'no-reference': { type: 'boolean', default: false },
    trace: { type: 'boolean', default: false },
  },
});
const parseRate = (s) => {
  const [max, perMs] = s.split('/').map(Number);
  if (!(max > 0 && perMs > 0)) throw new Error(`a rate is max/perMs, e.g. 500/1000; got ${s}`);
  return { max, perMs };
};
const list = (s) => (s ? s.split(',').filter(Boolean) : []);
const KEYS = Number(values.keys);
const SECONDS = Number(values.seconds);
const PROCESSES = Number(values.processes);
const QUEUE = 'default'; // the queue the worker claims from by default
const ours = systems.ours;
const c = headline['ours-tuned'];
const settings = { ...variants['ours-tuned'].settings(c), ...(values.poll ? { pollIntervalMs: Number(values.poll) } : {}) };

const cases = [
  ...list(values.rates).map((r) => ({ id: `queue ${r}`, shape: 'queue', rate: parseRate(r) })),
  ...list(values['key-rates']).map((r) => ({ id: `${KEYS} keys × ${r}`, shape: 'keys', rate: parseRate(r) })),
];
if (!values['no-reference']) {
  if (cases.some((k) => k.shape === 'queue')) cases.push({ id: 'queue, no limit', shape: 'queue', rate: null });
  if (cases.some((k) => k.shape === 'keys')) cases.push({ id: `${KEYS} keys, no limit`, shape: 'keys', rate: null });
}

/** Starts/s a case's limit allows: one rate for the queue, one per key. */
const limitPerSec = (k) => (k.rate ? (k.rate.max / k.rate.perMs) * 1_000 * (k.shape === 'keys' ? KEYS : 1) : Infinity);

async function openStore(url) {
  const dataSource = await new DataSource({ type: 'postgres', url, extra: { max: 4 } }).initialize();
  return { dataSource, store: new PostgresJobStore({ dataSource }) };
}

/** One cell: prefill, run the worker for the case's time (or until drained), read the starts. */
async function cell(server, k) {
  // Enough jobs that a limited case never runs dry inside its measured windows.
  const jobs = k.rate ? Math.max(Number(values.jobs), Math.ceil(limitPerSec(k) * (SECONDS + 2) * 1.1)) : Number(values.jobs);
  const db = await server.database(ours);
  let workers;
  try {
    const { dataSource, store } = await openStore(db.url);
    if (k.rate && k.shape === 'queue') await store.rateLimitSet({ target: { queue: QUEUE }, rate: k.rate, actor: 'bench' });
    for (let i = 0; i < jobs; i += 1_000) {
      const batch = Array.from({ length: Math.min(1_000, jobs - i) }, (_, j) => {
        const p = payload(i + j);
        if (k.shape === 'queue') return { name: 'noop', payload: p, queue: QUEUE };
        return { name: 'noop', payload: p, queue: QUEUE, concurrencyKey: `t${p.k % KEYS}`, ...(k.rate ? { rateLimit: k.rate } : {}) };
      });
      await store.jobEnqueueMany({ jobs: batch });
    }
    const declared = await store.rateLimitList();
    await dataSource.destroy();
    await db.analyze();
    await server.admin.query('CHECKPOINT');
    await db.settle();

    workers = await startWorkers({ system: 'ours', url: db.url, settings, processes: PROCESSES });
    const started = now();
    // A limited case runs --seconds past its first start, plus a window and a margin so the last
    // measured window is whole; the reference runs until every job has started.
    const runMs = k.rate ? SECONDS * 1_000 + Math.min(k.rate.perMs, 2_000) + 500 : 60_000;
    await until(() => workers.count() > 0, 10_000, 5);
    const first = Number.isFinite(workers.first()) ? workers.first() : started;
    await until(() => workers.count() >= jobs, Math.max(0, runMs - (now() - first)), 10);
    const end = now();
    const handled = workers.count();
    const procs = await workers.stop();
    workers = undefined;

    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    const { rows } = await client.query(
      `SELECT (extract(epoch FROM h.at) * 1000000)::bigint AS us, j.concurrency_key AS key
       FROM durable_scheduler.job_history h JOIN durable_scheduler.jobs j ON j.id = h.job_id
       WHERE h.state = 'running'`,
    );
    await client.end();
    const result = { id: k.id, shape: k.shape, rate: k.rate, jobs, handled, declared: declared.length, cpuMs: procs.reduce((a, p) => a + p.cpuMs, 0) };
    if (!k.rate) return { ...result, jobsPerSec: handled / ((end - first) / 1_000), drained: handled >= jobs };
    return { ...result, ...analyse(k, rows) };
  } finally {
    if (workers) await workers.stop();
    await db.drop();
  }
}

/** Achieved rate, busiest window and reuse lag, per group (the queue, or each key) and overall. */
function analyse(k, rows) {
  const groups = new Map();
  for (const r of rows) {
    const g = k.shape === 'queue' ? QUEUE : r.key;
    if (!groups.has(g)) groups.set(g, []);
    groups.get(g).push(Number(r.us));
  }
  const { max, perMs } = k.rate;
  const perUs = perMs * 1_000;
  const windows = Math.max(1, Math.floor((SECONDS * 1_000) / perMs));
  const spanUs = windows * perUs;
  let counted = 0;
  let busiest = 0;
  const ratios = [];
  const lags = [];
  let claims = 0;
  let sustained = 0;
  for (const times of groups.values()) {
    times.sort((a, b) => a - b);
    const t0 = times[0];
    // Past the first max starts, each start reuses a row: (n - max) of them from t0 to the last.
    if (times.length > max && times.at(-1) > t0) sustained += (times.length - max) / ((times.at(-1) - t0) / 1_000_000);
    let inSpan = 0;
    for (const t of times) if (t < t0 + spanUs) inSpan += 1;
    counted += inSpan;
    ratios.push(inSpan / (max * windows));
    // The busiest window [t_i, t_i + perMs) over every start t_i.
    for (let i = 0, j = 0; i < times.length; i++) {
      while (j < times.length && times[j] < times[i] + perUs) j++;
      busiest = Math.max(busiest, j - i);
    }
    // The n-th start reuses the row the (n - max)-th used: it could have come perMs after that one.
    for (let i = max; i < times.length; i++) if (times[i] < t0 + spanUs) lags.push((times[i] - times[i - max] - perUs) / 1_000);
    claims += new Set(times.filter((t) => t < t0 + spanUs)).size;
    if (values.trace && groups.size - 1 === [...groups.values()].indexOf(times)) {
      // The last group's claims: ms after its first start, and how many each started.
      const burst = new Map();
      for (const t of times) burst.set(t, (burst.get(t) ?? 0) + 1);
      console.log(`    claims of ${[...groups.keys()].at(-1)}: ${[...burst].map(([t, n]) => `${((t - t0) / 1_000).toFixed(0)}:${n}`).join(' ')}`);
    }
  }
  lags.sort((a, b) => a - b);
  const pct = (p) => (lags.length ? lags[Math.min(lags.length - 1, Math.floor(p * lags.length))] : NaN);
  const achieved = counted / ((windows * perMs) / 1_000);
  return {
    starts: rows.length,
    achieved,
    limit: limitPerSec(k),
    ratio: achieved / limitPerSec(k),
    sustained,
    sustainedRatio: sustained / limitPerSec(k),
    groupRatio: [Math.min(...ratios), Math.max(...ratios)],
    busiest,
    overshoot: busiest / max,
    lagP50: pct(0.5),
    lagP90: pct(0.9),
    claimsPerSec: claims / ((windows * perMs) / 1_000),
  };
}

const pgServer = await postgres();
const server = new Server(pgServer.url);
console.log(`server ${await server.version()} (${pgServer.label}); ${PROCESSES} worker process(es), each ${JSON.stringify(settings)}; ${SECONDS} s per limited case`);
const results = Object.fromEntries(cases.map((k) => [k.id, []]));
try {
  for (let r = 0; r < Number(values.runs); r++) {
    for (const k of cases) {
      const res = await cell(server, k);
      results[k.id].push(res);
      if (!k.rate) console.log(`  ${k.id}: ${fmt(res.jobsPerSec)} jobs/s (${res.handled} of ${res.jobs}${res.drained ? '' : ', capped'})`);
      else
        console.log(
          `  ${k.id}: ${fmt(res.achieved)} starts/s of ${fmt(res.limit)} (${res.ratio.toFixed(2)}${k.shape === 'keys' ? `, keys ${res.groupRatio.map((x) => x.toFixed(2)).join('–')}` : ''}), sustained ${fmt(res.sustained, 1)} (${res.sustainedRatio.toFixed(3)}), busiest window ${res.busiest}/${k.rate.max} (${res.overshoot.toFixed(2)}), reuse lag p50 ${res.lagP50.toFixed(1)} ms p90 ${res.lagP90.toFixed(1)} ms, ${fmt(res.claimsPerSec, 1)} claims/s with starts, ${res.starts} starts, ${res.declared} limits`,
        );
    }
  }
} finally {
  await server.close();
  await pgServer.stop();
}

// The table for bench/README.md: medians of the runs (the busiest window: the worst run).
const ref = (shape) => {
  const id = cases.find((k) => k.shape === shape && !k.rate)?.id;
  return id ? median(results[id].map((x) => x.jobsPerSec)) : NaN;
};
console.log('');
console.log('| case | limit starts/s | achieved starts/s | achieved / limit | sustained starts/s | sustained / limit | busiest window / max | reuse lag p50, p90 ms | unlimited jobs/s | limit / unlimited |');
console.log('|---|---|---|---|---|---|---|---|---|---|');
for (const k of cases.filter((x) => x.rate)) {
  const rs = results[k.id];
  const m = (f) => median(rs.map(f));
  const worst = Math.max(...rs.map((x) => x.busiest));
  console.log(
    `| ${k.id} | ${fmt(rs[0].limit)} | ${fmt(m((x) => x.achieved))} | ${m((x) => x.ratio).toFixed(2)} | ${fmt(m((x) => x.sustained), 1)} | ${m((x) => x.sustainedRatio).toFixed(3)} | ${worst}/${k.rate.max} = ${(worst / k.rate.max).toFixed(2)} | ${m((x) => x.lagP50).toFixed(0)}, ${m((x) => x.lagP90).toFixed(0)} | ${fmt(ref(k.shape))} | ${(rs[0].limit / ref(k.shape)).toFixed(2)} |`,
  );
}
