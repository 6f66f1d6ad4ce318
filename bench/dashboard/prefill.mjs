// The dashboard bench's prefill: a million jobs written with SQL (INSERT ... SELECT generate_series),
// in the schema the library under test migrated, shaped like a busy installation an operator
// opens the dashboard on. The counting triggers stay on, so the counts the overview reads are the
// library's own (its deltas, folded by its own fold). The history trigger is off while the jobs go
// in, because it would date every job's entry at the prefill's now(): the timelines are written
// here instead, for a sample of jobs, with the times each change happened.
//
// The mix, in enqueue (seq) order:
// - bulk: about 94 % of the jobs, created 3 days to 1 hour ago: mostly succeeded (finished a few
//   seconds after creation), 0.5 % dead-lettered (5 attempts, six distinct errors), 0.1 %
//   cancelled, 0.005 % quarantined, 1 % delayed (scheduled 1 hour to 7 days ahead), 0.1 %
//   awaiting_parents on one of those (an open edge), a settled edge per 100 succeeded jobs, and
//   1 % minted by a schedule;
// - the last hour: 6 %, the same kinds, so a throughput chart of the last hour has about a
//   thousand finished jobs a minute;
// - a fan-out: a parent scheduled a day ahead with 2,000 dependants awaiting it;
// - a backlog: 5,000 due jobs, created in the last 5 minutes;
// - 200 running jobs with leases 6 hours ahead (so nothing lapses while the bench runs).
// 20 queues (40 % in `default`), 12 wire names and one rare one (about 10 per million),
// concurrency keys tenant-1..5 on a fifth of the jobs, ~100-byte payloads.
import { performance } from 'node:perf_hooks';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const MAX_ATTEMPTS = 5;

export const QUEUES = [
  'default', 'emails', 'billing', 'reports', 'webhooks', 'images', 'search', 'sync', 'exports', 'notifications',
  'imports', 'payments', 'invoices', 'analytics', 'media', 'crm', 'audit', 'cleanup', 'ledger', 'partners',
];
export const NAMES = [
  'email.send', 'invoice.render', 'report.build', 'webhook.deliver', 'image.resize', 'search.index',
  'crm.sync', 'billing.charge', 'cache.warm', 'export.csv', 'notify.push', 'audit.compact',
];
/** About 10 jobs per million carry it: the listing's bounded scan case. */
export const RARE_NAME = 'ledger.reconcile';
/** The queue and key whose limits the prefill fills (limits are set through the store afterwards). */
export const FULL_QUEUE = 'billing';
export const FULL_KEY = 'tenant-1';
/** The queue an operator has paused. */
export const PAUSED_QUEUE = 'exports';
export const FANOUT = 2_000;
const ERRORS = [
  'Error: connect ECONNREFUSED 10.0.3.7:5432\n    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1555:16)',
  'TimeoutError: the handler did not finish within 30000 ms',
  'HttpError: POST https://hooks.partner.example/v2/events answered 502 Bad Gateway\n    at deliver (/app/dist/webhooks/deliver.js:41:11)',
  "TypeError: Cannot read properties of undefined (reading 'email')\n    at render (/app/dist/emails/render.js:88:23)",
  'Error: invoice 4711 is locked by another export',
  'RangeError: Maximum call stack size exceeded',
];

const lit = (text) => `'${text.replaceAll("'", "''")}'`;
const arrayOf = (items) => `ARRAY[${items.map(lit).join(', ')}]`;
const stamp = (ms) => `to_timestamp((${ms})::float8 / 1000)`;
/** A UUIDv7-shaped id: the creation millisecond, then the row number (unique, rising with time). */
function idSql(i, ms) {
  const h = `lpad(to_hex(${ms}), 12, '0')`;
  const t = `lpad(to_hex(${i}), 15, '0')`;
  return `(substr(${h}, 1, 8) || '-' || substr(${h}, 9, 4) || '-7000-8' || substr(${t}, 1, 3) || '-' || substr(${t}, 4, 12))::uuid`;
}
/** Schedule k's id, so a minted job can name its schedule before the schedules are written. */
const scheduleIdSql = (k) => `('00000000-0000-7000-8000-' || lpad(to_hex(${k}), 12, '0'))::uuid`;
const hash = (i, seed) => `abs(hashint8extended(${i}, ${seed}))`;

/** The segments of a prefill of `jobs` jobs, in enqueue order. */
export function prefillPlan({ jobs, backlog = 5_000, running = 200, schedules = 1_000, audit = 10_000 }) {
  const fixed = backlog + running + FANOUT + 1;
  const recent = Math.round(jobs * 0.06);
  const bulk = jobs - fixed - recent;
  if (bulk < jobs * 0.5) throw new Error(`--jobs ${jobs} is too small for the fixed segments (${fixed} jobs).`);
  let next = 1;
  const range = (count) => ({ from: next, to: (next += count) - 1 });
  return {
    jobs,
    schedules,
    audit,
    segments: { bulk: range(bulk), recent: range(recent), fanout: range(FANOUT + 1), backlog: range(backlog), running: range(running) },
  };
}

/**
 * What a job of each kind looks like. Columns are SQL over the row `r` (r.i, r.at, r.h, r.fin).
 * `history` lists the timeline written for a sampled job as (offset from creation, state, attempt, error).
 */
const KINDS = {
  succeeded: { state: 'succeeded', attempt: '1', worker: true, finished: true },
  dead: { state: 'dead_lettered', attempt: String(MAX_ATTEMPTS), worker: true, finished: true, error: `(${arrayOf(ERRORS)})[1 + r.h % ${ERRORS.length}]` },
  cancelled: { state: 'cancelled', attempt: '0', finished: true },
  quarantined: { state: 'quarantined', attempt: '1', worker: true, finished: true, error: lit('no handler is registered for this name') },
  delayed: { state: 'scheduled', attempt: '0', runAt: `${stamp('r.base')} + interval '1 hour' + (r.h % ${7 * 24}) * interval '1 hour'` },
  awaiting: { state: 'awaiting_parents', attempt: '0', parents: true },
  due: { state: 'scheduled', attempt: '0' },
  running: { state: 'running', attempt: '1', worker: true, lease: `${stamp('r.base')} + interval '6 hours'` },
};
const caseOf = (pick, fallback = 'NULL') =>
  `CASE r.kind ${Object.entries(KINDS)
    .filter(([, k]) => pick(k) !== undefined)
    .map(([name, k]) => `WHEN '${name}' THEN ${pick(k)}`)
    .join(' ')} ELSE ${fallback} END`;

/** One INSERT of jobs `$1..$2` of a segment, with their sampled timelines and their edges. */
function segmentSql(t, s) {
  const edges = s.edge
    ? `, edges AS (
        INSERT INTO ${t.dependencies} (child_id, parent_id, settled)
        SELECT r.id, ${s.edge.parentId}, ${s.edge.settled} FROM r WHERE ${s.edge.where}
      )`
    : '';
  // A sampled job's timeline: enqueued (or awaiting), then per attempt a claim and, for a failed
  // attempt, its error and the retry; then its end. Attempts 30 s apart; the end at r.fin.
  const history = `, timeline AS (
      INSERT INTO ${t.history} (job_id, name, at, state, attempt, error)
      SELECT r.id, r.name, e.at, e.state, e.attempt, e.error
      FROM r CROSS JOIN LATERAL (
        SELECT 0 AS o, r.at, CASE WHEN r.kind = 'awaiting' THEN 'awaiting_parents' ELSE 'scheduled' END AS state, 0 AS attempt, NULL::text AS error
        UNION ALL
        SELECT 2 * a - 1, r.at + (a - 1) * interval '30 seconds' + interval '40 milliseconds', 'running', a, NULL
        FROM generate_series(1, r.attempt) a WHERE r.kind IN ('succeeded', 'dead', 'quarantined', 'running')
        UNION ALL
        SELECT 2 * a, r.at + a * interval '30 seconds', 'scheduled', a, r.err
        FROM generate_series(1, r.attempt - 1) a WHERE r.kind = 'dead'
        UNION ALL
        SELECT 1000, r.fin, r.state, r.attempt, r.err WHERE r.fin IS NOT NULL
      ) e
      WHERE r.sampled
      ORDER BY r.i, e.o
    )`;
  return `
    WITH g AS (
      SELECT i, (${s.ms})::bigint AS ms, ${s.kind} AS kind, ${hash('i', 1)} AS h, ${hash('i', 2)} AS hq, ${hash('i', 3)} AS hn, $3::bigint AS base
      FROM generate_series($1::bigint, $2::bigint) i
    ), m AS (
      -- Minted by schedule k: every hundredth succeeded job, and a fifth of the dead letters.
      SELECT g.*, CASE WHEN (g.kind = 'succeeded' AND g.i % 100 = 7) OR (g.kind = 'dead' AND g.i % 1000 = 0) THEN 1 + g.h % $4::bigint END AS k FROM g
    ), b AS (
      SELECT m.*, ${stamp('m.ms')} AS at,
        CASE WHEN m.k IS NOT NULL THEN (${arrayOf(NAMES)})[1 + m.k % ${NAMES.length}]
             WHEN m.i % 99991 = 17 THEN ${lit(RARE_NAME)} ELSE ${s.name ?? `(${arrayOf(NAMES)})[1 + m.hn % ${NAMES.length}]`} END AS name,
        CASE WHEN m.k IS NOT NULL THEN (${arrayOf(QUEUES)})[1 + m.k % ${QUEUES.length}]
             ELSE ${s.queue ?? `CASE WHEN m.hq % 100 < 40 THEN 'default' ELSE (${arrayOf(QUEUES)})[2 + m.hq % ${QUEUES.length - 1}] END`} END AS queue,
        ${s.key ?? `CASE WHEN m.i % 5 = 0 THEN 'tenant-' || (1 + m.h % 5) END`} AS key
      FROM m
    ), r AS (
      SELECT r.*, ${idSql('r.i', 'r.ms')} AS id, ${caseOf((k) => lit(k.state))} AS state, (${caseOf((k) => k.attempt)})::int AS attempt,
        ${caseOf((k) => k.error)} AS err,
        -- Finished 0.2-3 s after creation, or after its last attempt for a dead letter.
        ${caseOf((k) => (k.finished ? `r.at + interval '200 milliseconds' + (r.h % 2800) * interval '1 millisecond'${k.state === 'dead_lettered' ? ` + interval '${(MAX_ATTEMPTS - 1) * 30} seconds'` : ''}` : undefined))} AS fin,
        ${s.sampled ?? `r.i % 20 = 0 OR r.kind = 'dead'`} AS sampled
      FROM b r
    )${history}${edges}
    INSERT INTO ${t.jobs} (id, name, queue, payload, state, run_at, scheduled_for, attempt, max_attempts, worker_id, leased_until,
                           last_error, created_at, updated_at, finished_at, pending_parents, dependency_mode, concurrency_key, schedule_id)
    SELECT r.id, r.name, r.queue, jsonb_build_object('orderId', r.i, 'tenant', r.key, 'pad', repeat('x', 60)), r.state,
      ${caseOf((k) => k.runAt, 'r.at')}, r.at, r.attempt, ${MAX_ATTEMPTS},
      ${caseOf((k) => (k.worker ? `'node-' || (r.h % 4)` : undefined))}, ${caseOf((k) => k.lease)},
      r.err, r.at, coalesce(r.fin, r.at), r.fin,
      ${caseOf((k) => (k.parents ? '1' : undefined), '0')}, ${caseOf((k) => (k.parents ? `'on_success'` : undefined))},
      r.key, CASE WHEN r.k IS NOT NULL THEN ${scheduleIdSql('r.k')} END
    FROM r ORDER BY r.i`;
}

/** The kinds of the bulk and the last hour, by row number (so they are spread evenly through time). */
const MIXED_KIND = `CASE WHEN i % 200 = 0 THEN 'dead' WHEN i % 1000 = 1 THEN 'cancelled' WHEN i % 20000 = 2 THEN 'quarantined'
  WHEN i % 100 = 3 THEN 'delayed' WHEN i % 1000 = 4 THEN 'awaiting' ELSE 'succeeded' END`;

/** Table names in `schema`. */
export function tablesOf(schema) {
  const q = (name) => `"${schema}"."${name}"`;
  return {
    schema,
    jobs: q('jobs'),
    history: q('job_history'),
    dependencies: q('dependencies'),
    schedules: q('schedules'),
    audit: q('audit_log'),
    counts: q('job_counts'),
    deltas: q('job_count_deltas'),
  };
}

/**
 * Writes the plan into a migrated schema through `query(text, params)`, in chunks of `chunk`
 * rows, and returns how long each phase took. Limits, the paused queue, the count fold and
 * ANALYZE are the caller's (they go through the store).
 */
export async function prefill({ query, t, plan, chunk, log }) {
  const base = Date.now();
  const { segments: s } = plan;
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
      await query(text, [from, to, base, plan.schedules]);
      log(`  ${label}: ${(to - range.from + 1).toLocaleString('en-US')} of ${(range.to - range.from + 1).toLocaleString('en-US')}`);
    }
  };
  const spread = (range, fromMs, toMs) => `${fromMs} + floor((i - ${range.from}) * ${(toMs - fromMs) / Math.max(1, range.to - range.from)}::float8)`;
  // A waiting dependant's parent is the delayed job just before it (i % 1000 = 4 follows i % 100 = 3);
  // a succeeded job at i % 100 = 50 depended on the succeeded job before it (a settled edge).
  const mixedEdge = (range, msOf) => ({
    parentId: idSql('r.i - 1', `(${msOf('r.i - 1')})::bigint`),
    settled: `r.kind <> 'awaiting'`,
    where: `(r.kind = 'awaiting' OR (r.kind = 'succeeded' AND r.i % 100 = 50)) AND r.i > ${range.from}`,
  });
  const trigger = `"jobs_effects_insert"`;
  await query(`ALTER TABLE ${t.jobs} DISABLE TRIGGER ${trigger}`);
  try {
    await timed('jobs', async () => {
      const bulkMs = (i) => spread(s.bulk, base - 3 * DAY, base - HOUR - MINUTE).replaceAll('i -', `${i} -`);
      await insert('bulk (3 days to 1 hour ago)', { ms: bulkMs('i'), kind: MIXED_KIND, edge: mixedEdge(s.bulk, bulkMs) }, s.bulk);
      const recentMs = (i) => spread(s.recent, base - HOUR, base - 6 * MINUTE).replaceAll('i -', `${i} -`);
      await insert('the last hour', { ms: recentMs('i'), kind: MIXED_KIND, edge: mixedEdge(s.recent, recentMs), sampled: 'true' }, s.recent);
      const parentMs = base - 8 * MINUTE;
      await insert('a parent and its dependants', {
        ms: String(parentMs),
        kind: `CASE WHEN i = ${s.fanout.from} THEN 'delayed' ELSE 'awaiting' END`,
        queue: `'reports'`,
        name: `CASE WHEN m.i = ${s.fanout.from} THEN 'report.build' ELSE 'report.part' END`,
        key: 'NULL::text',
        sampled: 'true',
        edge: { parentId: idSql(String(s.fanout.from), String(parentMs)), settled: 'false', where: `r.i > ${s.fanout.from}` },
      }, s.fanout);
      // Every 97th due job is in the full queue under the full key: a job both limits hold back.
      const pinned = (range, every) => ({
        queue: `CASE WHEN (m.i - ${range.from}) % ${every} = 0 THEN ${lit(FULL_QUEUE)} ELSE NULL END`,
        key: `CASE WHEN (m.i - ${range.from}) % ${every} = 0 THEN ${lit(FULL_KEY)} WHEN m.i % 5 = 0 THEN 'tenant-' || (2 + m.h % 4) END`,
      });
      const orDefault = (spec) => ({
        ...spec,
        queue: `coalesce(${spec.queue}, CASE WHEN m.hq % 100 < 40 THEN 'default' ELSE (${arrayOf(QUEUES)})[2 + m.hq % ${QUEUES.length - 1}] END)`,
      });
      await insert('the due backlog', orDefault({ ms: spread(s.backlog, base - 5 * MINUTE, base - 10_000), kind: `'due'`, sampled: 'true', ...pinned(s.backlog, 97) }), s.backlog);
      await insert('running', orDefault({ ms: spread(s.running, base - 3 * MINUTE, base - 5_000), kind: `'running'`, sampled: 'true', ...pinned(s.running, 40) }), s.running);
    });
  } finally {
    await query(`ALTER TABLE ${t.jobs} ENABLE TRIGGER ${trigger}`);
  }
  await timed('schedules and audit', async () => {
    // A third each: every 15 min, every 5 min (UTC), daily at 03:00 in Berlin; one in 50 paused.
    await query(
      `INSERT INTO ${t.schedules} (id, name, queue, payload, max_attempts, cron, timezone, interval_ms, anchor_at, state,
                                  next_fire_at, skipped_ticks, created_at, updated_at)
       SELECT ${scheduleIdSql('k')}, (${arrayOf(NAMES)})[1 + k % ${NAMES.length}], (${arrayOf(QUEUES)})[1 + k % ${QUEUES.length}],
         jsonb_build_object('schedule', k), ${MAX_ATTEMPTS},
         CASE k % 3 WHEN 1 THEN '*/5 * * * *' WHEN 2 THEN '0 3 * * *' END,
         CASE k % 3 WHEN 1 THEN 'UTC' WHEN 2 THEN 'Europe/Berlin' END,
         CASE WHEN k % 3 = 0 THEN 900000 END, CASE WHEN k % 3 = 0 THEN date_trunc('hour', now()) - interval '30 days' END,
         CASE WHEN k % 50 = 0 THEN 'paused' ELSE 'active' END,
         CASE WHEN k % 3 = 2 THEN (date_trunc('day', now() AT TIME ZONE 'Europe/Berlin') + interval '1 day 3 hours') AT TIME ZONE 'Europe/Berlin'
              ELSE date_trunc('hour', now()) + interval '1 hour' END,
         k % 7, ${stamp(`${base - 30 * DAY} + k::bigint * 1000`)}, now()
       FROM generate_series(1, $1::int) k`,
      [plan.schedules],
    );
    // Each schedule's last occurrence; three schedules stopped by a dead-lettered occurrence.
    await query(
      `UPDATE ${t.schedules} s SET last_job_id = x.id, last_fired_for = x.scheduled_for
       FROM (SELECT DISTINCT ON (schedule_id) schedule_id, id, scheduled_for FROM ${t.jobs}
             WHERE schedule_id IS NOT NULL ORDER BY schedule_id, scheduled_for DESC) x
       WHERE s.id = x.schedule_id`,
    );
    await query(
      `UPDATE ${t.schedules} s SET state = 'dead_lettered', halted_job_id = x.id
       FROM (SELECT DISTINCT ON (schedule_id) schedule_id, id FROM ${t.jobs}
             WHERE schedule_id IS NOT NULL AND state = 'dead_lettered' ORDER BY schedule_id, scheduled_for DESC LIMIT 3) x
       WHERE s.id = x.schedule_id`,
    );
    await query(
      `INSERT INTO ${t.audit} (at, actor, action, target, detail)
       SELECT ${stamp(`${base - 30 * DAY} + k::bigint * ${Math.floor((30 * DAY) / plan.audit)}`)},
         (ARRAY['dashboard:alice@ops-1', 'cli:bob@laptop', 'client:deploy-bot'])[1 + k % 3],
         (ARRAY['job.cancel', 'job.replay', 'queue.pause', 'queue.resume', 'schedule.trigger', 'schedule.pause'])[1 + k % 6],
         CASE WHEN k % 6 < 2 THEN 'job ' || gen_random_uuid() WHEN k % 6 < 4 THEN 'queue ' || (${arrayOf(QUEUES)})[1 + k % ${QUEUES.length}]
              ELSE 'schedule ' || ${scheduleIdSql(`1 + k % ${plan.schedules}`)} END,
         CASE WHEN k % 6 = 0 THEN jsonb_build_object('reason', 'stuck after deploy') END
       FROM generate_series(1, $1::int) k`,
      [plan.audit],
    );
  });
  return { base, phases };
}

/** What the schema holds: jobs per state counted from the table, and the sizes of the rest. */
export async function census(query, t) {
  const rows = await query(`SELECT queue, state, count(*)::bigint AS n FROM ${t.jobs} GROUP BY queue, state`);
  const byState = {};
  for (const r of rows) byState[r.state] = (byState[r.state] ?? 0) + Number(r.n);
  const [c] = await query(
    `SELECT (SELECT count(*) FROM ${t.history})::bigint AS history,
            (SELECT count(*) FROM ${t.dependencies} WHERE NOT settled)::bigint AS open_edges,
            (SELECT count(*) FROM ${t.dependencies} WHERE settled)::bigint AS settled_edges,
            (SELECT count(*) FROM ${t.schedules})::int AS schedules,
            (SELECT count(*) FROM ${t.audit})::int AS audit,
            (SELECT count(*) FROM ${t.jobs} WHERE finished_at >= now() - interval '1 hour')::int AS finished_last_hour,
            pg_total_relation_size('${t.jobs}')::bigint AS jobs_bytes,
            pg_total_relation_size('${t.history}')::bigint AS history_bytes`,
  );
  return {
    perQueueState: rows.map((r) => ({ queue: r.queue, state: r.state, count: Number(r.n) })),
    jobs: byState,
    totalJobs: Object.values(byState).reduce((a, b) => a + b, 0),
    queues: new Set(rows.map((r) => r.queue)).size,
    history: Number(c.history),
    openEdges: Number(c.open_edges),
    settledEdges: Number(c.settled_edges),
    schedules: c.schedules,
    audit: c.audit,
    finishedLastHour: c.finished_last_hour,
    jobsMB: Math.round(Number(c.jobs_bytes) / 1048576),
    historyMB: Math.round(Number(c.history_bytes) / 1048576),
  };
}
