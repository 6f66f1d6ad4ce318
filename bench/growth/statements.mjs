// Each periodic and listing statement of the store, timed in the client (the round trip and
// the row decoding included): one untimed warm-up call, then up to `calls` timed ones, the
// median reported. The purge, the trim, the lease sweep and the settle pass do real work on each
// call: the prefill left each of them enough for every call (prefill.mjs).
import { performance } from 'node:perf_hooks';
import { LISTED_QUEUE, TABLES } from './prefill.mjs';

/** Statements slower than this at the big size miss the target. */
export const TARGET_MS = 50;

/**
 * The statements, in the order they run. `setup` runs once, untimed, before the warm-up; `before`
 * untimed before every call. A statement whose build lacks the operation has `missing` set.
 */
export async function statementList({ store, query, base }) {
  const [{ id: jobId }] = await query(`SELECT id FROM ${TABLES.jobs} WHERE id >= $1 AND state = 'succeeded' ORDER BY id LIMIT 1`, [midId(base)]);
  const has = (name) => typeof store[name] === 'function';
  const future = new Date(base + 30 * 86_400_000);
  let pageTwo;
  const list = [
    { name: 'jobPurge (500, 24 h)', kind: 'periodic', run: () => store.jobPurge({ olderThanMs: 86_400_000, limit: 500 }) },
    {
      // A count of deleted entries, or (a trim that reads the log from its last place) { trimmed, examined }.
      name: 'historyTrim (keep 64, 1,000)',
      kind: 'periodic',
      run: async () => {
        const r = await store.historyTrim({ keep: 64, limit: 1_000 });
        return typeof r === 'number' ? r : { rows: r.trimmed, examined: r.examined };
      },
    },
    {
      // Only in builds where one node takes the sweep per interval: the lease every sweep asks for first.
      name: 'maintenanceLease (sweep)',
      kind: 'periodic',
      missing: !has('maintenanceLease'),
      run: async () => Number(await store.maintenanceLease({ task: 'sweep', workerId: 'growth-bench', leaseMs: 15_000 })),
    },
    { name: 'jobExpireLeases (100)', kind: 'periodic', run: async () => (await store.jobExpireLeases({ limit: 100 })).length },
    { name: 'jobSettleDependencies (1,000)', kind: 'periodic', run: () => store.jobSettleDependencies({ limit: 1_000 }) },
    {
      // Only in builds that keep job counters: each call folds what 100 enqueues (untimed, a month ahead) left.
      name: 'jobCountsFold (after 100 enqueues)',
      kind: 'periodic',
      missing: !has('jobCountsFold'),
      before: () => store.jobEnqueueMany({ jobs: Array.from({ length: 100 }, (_, k) => ({ name: 'job.00', payload: { k }, runAt: future })) }),
      run: () => store.jobCountsFold({ limit: 1_000 }),
    },
    { name: 'scheduleMintDue (nothing due)', kind: 'periodic', run: async () => (await store.scheduleMintDue({ limit: 100 })).minted.length },
    { name: 'jobList (50)', kind: 'listing', run: async () => (await store.jobList({ limit: 50 })).length },
    {
      name: 'jobListPage (50), page 2',
      kind: 'listing',
      missing: !has('jobListPage'),
      setup: async () => {
        pageTwo = (await store.jobListPage({ limit: 50 })).next;
      },
      run: async () => (await store.jobListPage({ limit: 50, before: pageTwo })).jobs.length,
    },
    { name: "jobList (state 'dead_lettered', 50)", kind: 'listing', run: async () => (await store.jobList({ state: 'dead_lettered', limit: 50 })).length },
    { name: `jobList (queue '${LISTED_QUEUE}', 50)`, kind: 'listing', run: async () => (await store.jobList({ queue: LISTED_QUEUE, limit: 50 })).length },
    { name: 'jobStats', kind: 'listing', run: async () => (await store.jobStats()).counts.length },
    { name: 'queueList', kind: 'listing', run: async () => (await store.queueList()).length },
    { name: 'jobListDeadLettered (50)', kind: 'listing', run: async () => (await store.jobListDeadLettered({ limit: 50 })).length },
    {
      // The dashboard's job page: the job, then its history.
      name: 'jobGet + jobHistory (one job)',
      kind: 'listing',
      run: async () => {
        await store.jobGet({ jobId });
        return (await store.jobHistory({ jobId })).length;
      },
    },
    { name: 'auditList (50)', kind: 'listing', run: async () => (await store.auditList({ limit: 50 })).length },
    { name: 'scheduleList', kind: 'listing', run: async () => (await store.scheduleList()).length },
  ];
  return list;
}

/** An id at the middle of the retained day (ids begin with their creation millisecond). */
function midId(base) {
  const h = Math.floor(base - 11 * 3_600_000).toString(16).padStart(12, '0');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-0000-0000-000000000000`;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Times one statement: a warm-up call, then `calls` timed calls, or fewer (never under 3) once
 * `budgetMs` has passed, so a statement that takes 30 s at 10 million rows does not take an hour.
 */
export async function timeStatement(statement, { calls, budgetMs }) {
  if (statement.missing) return { missing: true };
  try {
    await statement.setup?.();
    await statement.before?.();
    const w0 = performance.now();
    const results = [await statement.run()];
    const warmMs = performance.now() - w0;
    const times = [];
    const started = performance.now();
    for (let i = 0; i < calls; i++) {
      if (i >= 3 && performance.now() - started > budgetMs) break;
      await statement.before?.();
      const t0 = performance.now();
      results.push(await statement.run());
      times.push(performance.now() - t0);
    }
    // A run answers a row count, or { rows, ...detail } (the detail of the last call is kept).
    const rows = median(results.map((r) => (typeof r === 'number' ? r : r.rows)));
    const last = results.at(-1);
    const detail = typeof last === 'number' ? {} : { detail: Object.fromEntries(Object.entries(last).filter(([k]) => k !== 'rows')) };
    return { ms: median(times), min: Math.min(...times), max: Math.max(...times), calls: times.length, warmMs, rows, ...detail };
  } catch (error) {
    return { error: String(error?.message ?? error).split('\n')[0].slice(0, 200) };
  }
}
