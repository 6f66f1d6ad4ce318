// The growth bench's prefill: millions of retained jobs written with SQL (INSERT ... SELECT
// generate_series, in chunks), not through the library, because enqueueing and running 10 million
// jobs would take hours. The triggers stay on, so the library's own history entry and whatever
// counters its triggers keep see every row. The tables are the library's: a fresh database is
// migrated by the build under test first.
//
// The mix is what a day of retention looks like: mostly succeeded jobs finished in the last 24 h,
// some cancelled, dead-lettered and quarantined ones, 1 % scheduled a month ahead, dependants
// waiting on those, settled edges among finished jobs, ~20 queues, ~50 wire names, ~100-byte
// payloads and about 3 history entries per job. Beside it, the same fixed amount of *work* at
// every size, so that the small and the big database differ only in what they retain: jobs just
// past retention (the purge), lapsed leases with no attempts left (the lease sweep), finished
// parents whose edges nobody settled (the settle pass) and jobs with more than 64 history entries
// (the trim). Each is sized to last for every timed call of its statement.
import { performance } from 'node:perf_hooks';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const MAX_ATTEMPTS = 10;

/** What each kind of prefilled job looks like. `at` is the job's creation instant. */
const KINDS = {
  succeeded: { state: 'succeeded', attempt: 1, finished: true, worker: true, extras: 2 },
  dead: { state: 'dead_lettered', attempt: MAX_ATTEMPTS, finished: true, worker: true, error: 'Error: boom', extras: 2 },
  cancelled: { state: 'cancelled', attempt: 0, finished: true, extras: 1 },
  quarantined: { state: 'quarantined', attempt: 1, finished: true, worker: true, error: 'no handler is registered for this name', extras: 2 },
  future: { state: 'scheduled', attempt: 0, runAt: `at + interval '30 days'`, extras: 0 },
  awaiting: { state: 'awaiting_parents', attempt: 0, parents: 1, extras: 0 },
  // A dependant of a finished parent whose edge is still open: the settle pass's work. Dated a
  // month ahead so that, once released, it sits behind the drain's jobs in the claim index.
  child: { state: 'awaiting_parents', attempt: 0, parents: 1, runAt: `at + interval '30 days'`, extras: 0 },
  // A running job whose lease lapsed two hours ago with no attempts left: the lease sweep's work.
  lapsed: { state: 'running', attempt: MAX_ATTEMPTS, worker: true, lease: `at + interval '1 minute'`, extras: 2 },
  live: { state: 'running', attempt: 1, worker: true, lease: `at + interval '7 days'`, extras: 2 },
  // A job retried 50 times with 100 history entries (retained, not yet past 24 h): the trim keeps 64.
  trim: { state: 'succeeded', attempt: 50, maxAttempts: 100, finished: true, worker: true, extras: 99 },
};

const caseOf = (pick, fallback = 'NULL') =>
  `CASE r.kind ${Object.entries(KINDS)
    .filter(([, k]) => pick(k) !== undefined)
    .map(([name, k]) => `WHEN '${name}' THEN ${pick(k)}`)
    .join(' ')} ELSE ${fallback} END`;
const lit = (text) => `'${text.replaceAll("'", "''")}'`;

/** A UUIDv7-shaped id: the creation millisecond, then the row number (so ids are unique and rise). */
function idSql(i, ms) {
  const h = `lpad(to_hex(${ms}), 12, '0')`;
  const t = `lpad(to_hex(${i}), 15, '0')`;
  return `(substr(${h}, 1, 8) || '-' || substr(${h}, 9, 4) || '-7000-8' || substr(${t}, 1, 3) || '-' || substr(${t}, 4, 12))::uuid`;
}

const stamp = (ms) => `to_timestamp((${ms})::float8 / 1000)`;
// Hashes of the row number, so queue, name and kind are not correlated with one another.
const queueSql = (i) => `CASE WHEN abs(hashint8extended(${i}, 1)) % 1000 < 500 THEN 'default' ELSE 'q' || lpad((abs(hashint8extended(${i}, 2)) % 19)::text, 2, '0') END`;
const nameSql = (i) => `'job.' || lpad((abs(hashint8extended(${i}, 3)) % 50)::text, 2, '0')`;

/** The queue the bench's filtered listing asks for (one of 19 sharing half the jobs). */
export const LISTED_QUEUE = 'q07';
/** The wire names of prefilled jobs, so a worker in the big database has a handler for each. */
export const PREFILL_NAMES = Array.from({ length: 50 }, (_, k) => `job.${String(k).padStart(2, '0')}`);

/** The segments of a prefill of `rows` jobs, and the work each statement has waiting, for `calls` timed calls. */
export function prefillPlan(rows, calls) {
  const uses = calls + 2; // a warm-up call and the plan's call come on top of the timed ones
  const work = {
    purge: 500 * uses + 2_000,
    lapsed: 100 * uses + 500,
    live: 100,
    children: 1_000 * uses,
    fanOut: 100,
    trimJobs: Math.ceil((1_000 * uses) / 36) + 20,
  };
  const parents = Math.ceil(work.children / work.fanOut);
  const special = work.purge + work.lapsed + work.live + work.children + parents + work.trimJobs;
  if (rows < 2 * special) throw new Error(`--rows ${rows} is too small: the fixed work alone is ${special} jobs; use at least ${2 * special}.`);
  const bulk = rows - special;
  let next = 1;
  const range = (count) => {
    const from = next;
    next += count;
    return { from, to: next - 1 };
  };
  // The long histories come first in the log (inserted first), so a trim that reads the log from
  // where it last stopped (a fresh store starts at the beginning) meets them in its first passes;
  // their ids are the newest (created 5 minutes ago), so a trim that ranks the history by job id
  // meets them last, as it meets a job that just passed the bound.
  const trim = range(work.trimJobs);
  const purge = range(work.purge);
  const main = range(bulk);
  const parent = range(parents);
  const child = range(work.children);
  const lapsed = range(work.lapsed);
  const live = range(work.live);
  return { rows, work: { ...work, parents, bulk }, segments: { purge, main, parent, child, trim, lapsed, live } };
}

/** One INSERT of jobs `from..to` with their extra history entries and edges, as one statement. */
function segmentSql(t, s) {
  const extras = caseOf((k) => k.extras, '0');
  const edges = s.edge
    ? `, edges AS (
        INSERT INTO ${t.dependencies} (child_id, parent_id, settled)
        SELECT r.id, ${s.edge.parentId}, ${s.edge.settled} FROM r WHERE ${s.edge.where}
      )`
    : '';
  return `
    WITH g AS (
      SELECT i, (${s.ms})::bigint AS ms, ${s.kind} AS kind FROM generate_series($1::bigint, $2::bigint) i
    ), r AS (
      SELECT g.*, ${idSql('g.i', 'g.ms')} AS id, ${stamp('g.ms')} AS at, ${s.name ?? nameSql('g.i')} AS name, ${s.queue ?? queueSql('g.i')} AS queue FROM g
    ), extras AS (
      INSERT INTO ${t.history} (job_id, name, at, state, attempt)
      SELECT r.id, r.name, r.at, CASE WHEN k % 2 = 1 THEN 'scheduled' ELSE 'running' END, k / 2
      FROM r CROSS JOIN LATERAL generate_series(1, ${extras}) k
    )${edges}
    INSERT INTO ${t.jobs} (id, name, queue, payload, state, run_at, scheduled_for, attempt, max_attempts, worker_id,
                           leased_until, last_error, created_at, updated_at, finished_at, pending_parents, dependency_mode)
    SELECT r.id, r.name, r.queue, jsonb_build_object('k', r.i, 'pad', repeat('x', 84)), ${caseOf((k) => lit(k.state))},
      ${caseOf((k) => k.runAt, 'r.at')}, ${caseOf((k) => k.runAt, 'r.at')}, ${caseOf((k) => k.attempt)},
      ${caseOf((k) => k.maxAttempts, String(MAX_ATTEMPTS))}, ${caseOf((k) => (k.worker ? `'bench-worker'` : undefined))},
      ${caseOf((k) => k.lease)}, ${caseOf((k) => (k.error ? lit(k.error) : undefined))}, r.at,
      ${caseOf((k) => (k.finished ? `r.at + interval '200 milliseconds'` : undefined), 'r.at')},
      ${caseOf((k) => (k.finished ? `r.at + interval '200 milliseconds'` : undefined))},
      ${caseOf((k) => k.parents, '0')}, ${caseOf((k) => (k.parents ? `'on_success'` : undefined))}
    FROM r ORDER BY r.i`;
}

/** The table names of the default schema (the bench never sets another). */
export const TABLES = {
  jobs: 'durable_scheduler.jobs',
  history: 'durable_scheduler.job_history',
  dependencies: 'durable_scheduler.dependencies',
  schedules: 'durable_scheduler.schedules',
  audit: 'durable_scheduler.audit_log',
};

/**
 * Writes the plan into a migrated database through `query(text, params)`, then folds the counters
 * (when the build keeps them), vacuums, analyzes and checkpoints. Returns how long each phase took.
 */
export async function prefill({ query, store, plan, chunk, log }) {
  const t = TABLES;
  const base = Date.now();
  const { segments: s, work } = plan;
  const phases = {};
  const timed = async (name, run) => {
    const t0 = performance.now();
    await run();
    phases[name] = Math.round(performance.now() - t0);
  };
  const insert = async (label, spec, range) => {
    const text = segmentSql(t, spec);
    for (let from = range.from; from <= range.to; from += chunk) {
      const to = Math.min(range.to, from + chunk - 1);
      await query(text, [from, to]);
      if (range.to - range.from >= chunk) log(`  ${label}: ${(to - range.from + 1).toLocaleString('en-US')} of ${(range.to - range.from + 1).toLocaleString('en-US')}`);
    }
  };
  const fixed = (ms, kind, extra = {}) => ({ ms: String(ms), kind: lit(kind), ...extra });
  await timed('jobs', async () => {
    await insert('long histories', fixed(base - 5 * 60_000, 'trim'), s.trim);
    // Succeeded 24 h 1 min to 25 h ago: the purge's work.
    const purgeSpan = HOUR - 60_000;
    await insert('past retention', { ms: `${base - 25 * HOUR} + floor((i - ${s.purge.from}) * ${purgeSpan / work.purge}::float8)`, kind: `'succeeded'` }, s.purge);
    // The retained day, spread over the 22 hours before the prefill began (so none of it passes
    // retention for 2 hours), enqueue order following time as it does in a real table.
    const msPer = (22 * HOUR) / work.bulk;
    const msOf = (i) => `${base - 22 * HOUR} + floor((${i} - ${s.main.from}) * ${msPer}::float8)`;
    await insert('retained', {
      ms: msOf('i'),
      kind: `CASE WHEN i % 1000 = 0 THEN 'dead' WHEN i % 1000 = 1 THEN 'cancelled' WHEN i % 10000 = 2 THEN 'quarantined'
                  WHEN i % 100 = 3 THEN 'future' WHEN i % 1000 = 4 THEN 'awaiting' ELSE 'succeeded' END`,
      // A waiting dependant's parent is the job before it, dated a month ahead (an open edge);
      // every hundredth succeeded job depended on the succeeded job before it (a settled edge).
      edge: {
        parentId: idSql('r.i - 1', `(${msOf('r.i - 1')})::bigint`),
        settled: `r.kind <> 'awaiting'`,
        where: `(r.kind = 'awaiting' OR r.i % 100 = 50) AND r.i > ${s.main.from}`,
      },
    }, s.main);
    const recent = base - 10 * 60_000;
    await insert('finished parents', fixed(recent, 'succeeded'), s.parent);
    await insert('their waiting dependants', fixed(recent, 'child', {
      queue: `'fanout'`,
      edge: { parentId: idSql(`${s.parent.from} + (r.i - ${s.child.from}) / ${work.fanOut}`, String(recent)), settled: 'false', where: 'true' },
    }), s.child);
    await insert('lapsed leases', fixed(base - 2 * HOUR, 'lapsed'), s.lapsed);
    await insert('live leases', fixed(base - 60_000, 'live'), s.live);
  });
  // Listings of schedules and the audit log grow too: one schedule per 1,000 jobs (none due for a
  // month), one audit entry per 100.
  const schedules = Math.max(1, Math.round(plan.rows / 1_000));
  const audits = Math.max(1, Math.round(plan.rows / 100));
  await timed('schedules and audit', async () => {
    await query(
      `INSERT INTO ${t.schedules} (id, name, queue, payload, max_attempts, interval_ms, anchor_at, next_fire_at)
       SELECT gen_random_uuid(), 'sched.' || (k % 50), 'default', '{}'::jsonb, 10, 3600000, ${stamp(base + 30 * DAY)}, ${stamp(base + 30 * DAY)}
       FROM generate_series(1, $1::int) k`,
      [schedules],
    );
    await query(
      `INSERT INTO ${t.audit} (at, actor, action, target, detail)
       SELECT ${stamp(`${base - DAY} + k * ${DAY / audits}`)}, 'bench', 'job.cancel', 'job ' || k, jsonb_build_object('reason', 'bench')
       FROM generate_series(1, $1::int) k`,
      [audits],
    );
  });
  const folded = await foldCounts(store);
  if (folded) phases.fold = folded.ms;
  await timed('vacuum analyze', () => query('VACUUM ANALYZE'));
  await timed('checkpoint', () => query('CHECKPOINT'));
  return { base, phases, schedules, audits, folded };
}

/**
 * Folds the job counters until nothing is left, as a worker's maintenance would have, where the
 * build keeps counters (`jobCountsFold({ limit })` returning how many it folded). A build whose
 * fold has another shape is recorded, not fatal: the stats read then pays for the unfolded rows.
 */
export async function foldCounts(store) {
  if (typeof store.jobCountsFold !== 'function') return null;
  const t0 = performance.now();
  let rows = 0;
  try {
    for (let i = 0; i < 10_000; i++) {
      const n = await store.jobCountsFold({ limit: 10_000 });
      if (typeof n !== 'number') return { rows, ms: Math.round(performance.now() - t0), error: `jobCountsFold returned ${typeof n}, not a count` };
      rows += n;
      if (n === 0) break;
    }
  } catch (error) {
    return { rows, ms: Math.round(performance.now() - t0), error: String(error?.message ?? error).split('\n')[0] };
  }
  return { rows, ms: Math.round(performance.now() - t0) };
}

/** What the database holds after the prefill: jobs per state, history entries, edges and sizes. */
export async function census(query) {
  const t = TABLES;
  const states = await query(`SELECT state, count(*)::bigint AS n FROM ${t.jobs} GROUP BY state ORDER BY state`);
  const [counts] = await query(
    `SELECT (SELECT count(*) FROM ${t.history})::bigint AS history,
            (SELECT count(*) FROM ${t.dependencies} WHERE NOT settled)::bigint AS open_edges,
            (SELECT count(*) FROM ${t.dependencies} WHERE settled)::bigint AS settled_edges,
            (SELECT count(DISTINCT queue) FROM ${t.jobs})::int AS queues,
            (SELECT count(*) FROM ${t.schedules})::int AS schedules,
            (SELECT count(*) FROM ${t.audit})::int AS audit,
            pg_total_relation_size('${t.jobs}')::bigint AS jobs_bytes,
            pg_total_relation_size('${t.history}')::bigint AS history_bytes,
            pg_database_size(current_database())::bigint AS database_bytes`,
  );
  const jobs = Object.fromEntries(states.map((r) => [r.state, Number(r.n)]));
  return {
    jobs,
    totalJobs: Object.values(jobs).reduce((a, b) => a + b, 0),
    history: Number(counts.history),
    openEdges: Number(counts.open_edges),
    settledEdges: Number(counts.settled_edges),
    queues: counts.queues,
    schedules: counts.schedules,
    audit: counts.audit,
    jobsMB: Math.round(Number(counts.jobs_bytes) / 1048576),
    historyMB: Math.round(Number(counts.history_bytes) / 1048576),
    databaseMB: Math.round(Number(counts.database_bytes) / 1048576),
  };
}
