// The MariaDB dashboard bench's prefill: prefill.mjs's mix (see its head), written with
// INSERT ... SELECT over MariaDB's sequence engine (seq_1_to_N), in the tables the library under
// test migrated. MariaDB has no data-modifying CTEs, so each chunk of jobs goes in first and its
// edges and sampled timelines are then read back from it by seq (a job's seq is its row number i).
// The MySQL store keeps its counts in code, not triggers: the counts rows are written from a
// GROUP BY of the jobs, and the history gets its positions (pos = id) here, as the sequencer would.
import { performance } from 'node:perf_hooks';
import { FULL_KEY, FULL_QUEUE, NAMES, QUEUES, RARE_NAME } from './prefill.mjs';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const MAX_ATTEMPTS = 5;
const ERRORS = [
  'Error: connect ECONNREFUSED 10.0.3.7:5432\n    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1555:16)',
  'TimeoutError: the handler did not finish within 30000 ms',
  'HttpError: POST https://hooks.partner.example/v2/events answered 502 Bad Gateway\n    at deliver (/app/dist/webhooks/deliver.js:41:11)',
  "TypeError: Cannot read properties of undefined (reading 'email')\n    at render (/app/dist/emails/render.js:88:23)",
  'Error: invoice 4711 is locked by another export',
  'RangeError: Maximum call stack size exceeded',
];

const lit = (text) => `'${text.replaceAll('\\', '\\\\').replaceAll("'", "''").replaceAll('\n', '\\n')}'`;
/** items[1 + (n % items.length)], as ELT picks it (1-based). */
const pick = (items, n) => `ELT(1 + (${n}) % ${items.length}, ${items.map(lit).join(', ')})`;
/** An instant `ms` (epoch milliseconds, SQL) as DATETIME(3) UTC, independent of the session's time zone. */
const stamp = (ms) => `CAST(TIMESTAMPADD(MICROSECOND, (${ms}) * 1000, '1970-01-01 00:00:00') AS DATETIME(3))`;
const hex = (n, width) => `LPAD(LOWER(HEX(${n})), ${width}, '0')`;
/** A UUIDv7-shaped id: the creation millisecond, then the row number (unique, rising with time). */
const idSql = (i, ms) =>
  `CONCAT(SUBSTR(${hex(ms, 12)}, 1, 8), '-', SUBSTR(${hex(ms, 12)}, 9, 4), '-7000-8', SUBSTR(${hex(i, 15)}, 1, 3), '-', SUBSTR(${hex(i, 15)}, 4, 12))`;
const scheduleIdSql = (k) => `CONCAT('00000000-0000-7000-8000-', ${hex(k, 12)})`;
const hash = (i, seed) => `CRC32(CONCAT(${i}, ':${seed}'))`;

/** The kinds of the bulk and the last hour, by row number, as prefill.mjs's MIXED_KIND. */
const MIXED_KIND = `CASE WHEN seq % 200 = 0 THEN 'dead' WHEN seq % 1000 = 1 THEN 'cancelled' WHEN seq % 20000 = 2 THEN 'quarantined'
  WHEN seq % 100 = 3 THEN 'delayed' WHEN seq % 1000 = 4 THEN 'awaiting' ELSE 'succeeded' END`;

const KINDS = {
  succeeded: { state: 'succeeded', attempt: 1, worker: true, finished: true },
  dead: { state: 'dead_lettered', attempt: MAX_ATTEMPTS, worker: true, finished: true, error: pick(ERRORS, 'r.h') },
  cancelled: { state: 'cancelled', attempt: 0, finished: true },
  quarantined: { state: 'quarantined', attempt: 1, worker: true, finished: true, error: lit('no handler is registered for this name') },
  delayed: { state: 'scheduled', attempt: 0, runAt: stamp(`r.base + ${HOUR} + (r.h % ${7 * 24}) * ${HOUR}`) },
  awaiting: { state: 'awaiting_parents', attempt: 0, parents: true },
  due: { state: 'scheduled', attempt: 0 },
  running: { state: 'running', attempt: 1, worker: true, lease: stamp(`r.base + ${6 * HOUR}`) },
};
const caseOf = (get, fallback = 'NULL') =>
  `CASE r.kind ${Object.entries(KINDS)
    .filter(([, k]) => get(k) !== undefined)
    .map(([name, k]) => `WHEN '${name}' THEN ${get(k)}`)
    .join(' ')} ELSE ${fallback} END`;

/** Table names of the store's installation (its `naming`). */
export function tablesOfMysql(naming) {
  return { jobs: naming.jobs, history: naming.history, dependencies: naming.dependencies, schedules: naming.schedules, audit: naming.audit, counts: naming.counts, deltas: naming.countDeltas };
}

/** One INSERT of the jobs `from..to` of a segment (literal bounds: the sequence engine takes them in its name). */
function jobsSql(t, s, from, to, base, schedules) {
  const defaultQueue = `CASE WHEN m.hq % 100 < 40 THEN 'default' ELSE ELT(2 + m.hq % ${QUEUES.length - 1}, ${QUEUES.map(lit).join(', ')}) END`;
  const fin = caseOf((k) => (k.finished ? `r.ms + 200 + r.h % 2800${k.state === 'dead_lettered' ? ` + ${(MAX_ATTEMPTS - 1) * 30_000}` : ''}` : undefined));
  return `
    INSERT INTO ${t.jobs} (seq, id, name, queue, payload, state, run_at, scheduled_for, attempt, max_attempts, worker_id, leased_until,
                           last_error, created_at, updated_at, finished_at, pending_parents, dependency_mode, concurrency_key, schedule_id)
    SELECT r.i, ${idSql('r.i', 'r.ms')}, r.name, r.queue,
      CONCAT('{"orderId":', r.i, ',"tenant":', IF(r.ckey IS NULL, 'null', CONCAT('"', r.ckey, '"')), ',"pad":"', REPEAT('x', 60), '"}'),
      ${caseOf((k) => lit(k.state))}, ${caseOf((k) => k.runAt, stamp('r.ms'))}, ${stamp('r.ms')}, ${caseOf((k) => k.attempt)}, ${MAX_ATTEMPTS},
      ${caseOf((k) => (k.worker ? `CONCAT('node-', r.h % 4)` : undefined))}, ${caseOf((k) => k.lease)},
      ${caseOf((k) => k.error)}, ${stamp('r.ms')}, ${stamp(`COALESCE(${fin}, r.ms)`)}, IF(${fin} IS NULL, NULL, ${stamp(fin)}),
      ${caseOf((k) => (k.parents ? '1' : undefined), '0')}, ${caseOf((k) => (k.parents ? `'on_success'` : undefined))},
      r.ckey, IF(r.k IS NULL, NULL, ${scheduleIdSql('r.k')})
    FROM (
      SELECT m.*,
        CASE WHEN m.k IS NOT NULL THEN ${pick(NAMES, 'm.k')} WHEN m.i % 99991 = 17 THEN ${lit(RARE_NAME)} ELSE ${s.name ?? pick(NAMES, 'm.hn')} END AS name,
        CASE WHEN m.k IS NOT NULL THEN ${pick(QUEUES, 'm.k')} ELSE COALESCE(${s.queue ?? 'NULL'}, ${defaultQueue}) END AS queue,
        ${s.key ?? `CASE WHEN m.i % 5 = 0 THEN CONCAT('tenant-', 1 + m.h % 5) END`} AS ckey
      FROM (
        SELECT g.*, CASE WHEN (g.kind = 'succeeded' AND g.i % 100 = 7) OR (g.kind = 'dead' AND g.i % 1000 = 0) THEN 1 + g.h % ${schedules} END AS k
        FROM (SELECT seq AS i, CAST(${s.ms} AS SIGNED) AS ms, ${s.kind} AS kind, ${hash('seq', 1)} AS h, ${hash('seq', 2)} AS hq, ${hash('seq', 3)} AS hn, ${base} AS base
              FROM seq_${from}_to_${to}) g
      ) m
    ) r`;
}

/**
 * A sampled job's timeline (prefill.mjs's): enqueued (or awaiting), per attempt a claim and, for a
 * failed one, its error and retry 30 s apart, then its end at finished_at; in job order, so ids follow.
 */
function historySql(t, from, to, sampled) {
  const attempts = 'seq_1_to_5';
  return `
    INSERT INTO ${t.history} (job_id, name, at, state, attempt, error)
    SELECT e.id, e.name, e.at, e.state, e.attempt, e.error FROM (
      SELECT j.seq, 0 AS o, j.id, j.name, j.created_at AS at, IF(j.state = 'awaiting_parents', 'awaiting_parents', 'scheduled') AS state, 0 AS attempt, NULL AS error
      FROM ${t.jobs} j WHERE j.seq BETWEEN ${from} AND ${to} AND (${sampled})
      UNION ALL
      SELECT j.seq, 2 * a.seq - 1, j.id, j.name, j.created_at + INTERVAL (a.seq - 1) * 30 SECOND + INTERVAL 40000 MICROSECOND, 'running', a.seq, NULL
      FROM ${t.jobs} j JOIN ${attempts} a ON a.seq <= j.attempt
      WHERE j.seq BETWEEN ${from} AND ${to} AND (${sampled}) AND j.state IN ('succeeded', 'dead_lettered', 'quarantined', 'running')
      UNION ALL
      SELECT j.seq, 2 * a.seq, j.id, j.name, j.created_at + INTERVAL a.seq * 30 SECOND, 'scheduled', a.seq, j.last_error
      FROM ${t.jobs} j JOIN ${attempts} a ON a.seq <= j.attempt - 1
      WHERE j.seq BETWEEN ${from} AND ${to} AND (${sampled}) AND j.state = 'dead_lettered'
      UNION ALL
      SELECT j.seq, 1000, j.id, j.name, j.finished_at, j.state, j.attempt, j.last_error
      FROM ${t.jobs} j WHERE j.seq BETWEEN ${from} AND ${to} AND (${sampled}) AND j.finished_at IS NOT NULL
    ) e ORDER BY e.seq, e.o`;
}

/**
 * Writes the plan (prefill.mjs's prefillPlan) through `query(text, params)` in chunks of `chunk`
 * jobs, and returns how long each phase took. The paused queue, the limits and ANALYZE are the caller's.
 */
export async function prefillMysql({ query, t, plan, chunk, log }) {
  const base = Date.now();
  const { segments: s } = plan;
  const phases = {};
  const timed = async (name, run) => {
    const t0 = performance.now();
    await run();
    phases[name] = Math.round(performance.now() - t0);
  };
  const spread = (range, fromMs, toMs) => `${fromMs} + FLOOR((seq - ${range.from}) * ${(toMs - fromMs) / Math.max(1, range.to - range.from)})`;
  // A waiting dependant's parent is the delayed job just before it; a succeeded job at i % 100 = 50
  // depended on the succeeded job before it (a settled edge).
  const mixedEdges = (from, to) =>
    `INSERT INTO ${t.dependencies} (child_id, parent_id, settled)
     SELECT c.id, p.id, c.state <> 'awaiting_parents' FROM ${t.jobs} c JOIN ${t.jobs} p ON p.seq = c.seq - 1
     WHERE c.seq BETWEEN ${Math.max(from, 2)} AND ${to}
       AND (c.state = 'awaiting_parents' OR (c.state = 'succeeded' AND c.seq % 100 = 50))`;
  const insert = async (label, spec, range, { edges, sampled = 'j.seq % 20 = 0 OR j.state = \'dead_lettered\'' } = {}) => {
    for (let from = range.from; from <= range.to; from += chunk) {
      const to = Math.min(range.to, from + chunk - 1);
      await query(jobsSql(t, spec, from, to, base, plan.schedules));
      if (edges) await query(edges(from, to));
      await query(historySql(t, from, to, sampled));
      log(`  ${label}: ${(to - range.from + 1).toLocaleString('en-US')} of ${(range.to - range.from + 1).toLocaleString('en-US')}`);
    }
  };
  await timed('jobs', async () => {
    await insert('bulk (3 days to 1 hour ago)', { ms: spread(s.bulk, base - 3 * DAY, base - HOUR - MINUTE), kind: MIXED_KIND }, s.bulk, { edges: mixedEdges });
    await insert('the last hour', { ms: spread(s.recent, base - HOUR, base - 6 * MINUTE), kind: MIXED_KIND }, s.recent, { edges: mixedEdges, sampled: 'TRUE' });
    const parentMs = base - 8 * MINUTE;
    await insert('a parent and its dependants', {
      ms: String(parentMs),
      kind: `CASE WHEN seq = ${s.fanout.from} THEN 'delayed' ELSE 'awaiting' END`,
      queue: `'reports'`,
      name: `CASE WHEN m.i = ${s.fanout.from} THEN 'report.build' ELSE 'report.part' END`,
      key: 'NULL',
    }, s.fanout, {
      sampled: 'TRUE',
      edges: (from, to) =>
        `INSERT INTO ${t.dependencies} (child_id, parent_id, settled)
         SELECT c.id, p.id, FALSE FROM ${t.jobs} c JOIN ${t.jobs} p ON p.seq = ${s.fanout.from} WHERE c.seq BETWEEN ${Math.max(from, s.fanout.from + 1)} AND ${to}`,
    });
    // Every 97th due job (40th running) is in the full queue under the full key: both limits hold it back.
    const pinned = (range, every) => ({
      queue: `CASE WHEN (m.i - ${range.from}) % ${every} = 0 THEN ${lit(FULL_QUEUE)} END`,
      key: `CASE WHEN (m.i - ${range.from}) % ${every} = 0 THEN ${lit(FULL_KEY)} WHEN m.i % 5 = 0 THEN CONCAT('tenant-', 2 + m.h % 4) END`,
    });
    await insert('the due backlog', { ms: spread(s.backlog, base - 5 * MINUTE, base - 10_000), kind: `'due'`, ...pinned(s.backlog, 97) }, s.backlog, { sampled: 'TRUE' });
    await insert('running', { ms: spread(s.running, base - 3 * MINUTE, base - 5_000), kind: `'running'`, ...pinned(s.running, 40) }, s.running, { sampled: 'TRUE' });
  });
  await timed('history positions and counts', async () => {
    // Every entry has committed: the positions the sequencer would hand out, in id order.
    await query(`UPDATE ${t.history} SET pos = id WHERE pos IS NULL`);
    await query(`INSERT INTO ${t.counts} (queue, state, count) SELECT queue, state, COUNT(*) FROM ${t.jobs} GROUP BY queue, state`);
  });
  await timed('schedules and audit', async () => {
    const hourMs = Math.floor(base / HOUR) * HOUR;
    // Daily at 03:00 Berlin is 02:00 UTC in winter (CET); the bench needs a plausible next fire, not DST.
    const berlin3 = Math.floor(base / DAY) * DAY + DAY + 2 * HOUR;
    await query(
      `INSERT INTO ${t.schedules} (id, name, queue, payload, max_attempts, cron, timezone, interval_ms, anchor_at, state,
                                  next_fire_at, skipped_ticks, created_at, updated_at)
       SELECT ${scheduleIdSql('k')}, ${pick(NAMES, 'k')}, ${pick(QUEUES, 'k')}, CONCAT('{"schedule":', k, '}'), ${MAX_ATTEMPTS},
         CASE k % 3 WHEN 1 THEN '*/5 * * * *' WHEN 2 THEN '0 3 * * *' END,
         CASE k % 3 WHEN 1 THEN 'UTC' WHEN 2 THEN 'Europe/Berlin' END,
         CASE WHEN k % 3 = 0 THEN 900000 END, CASE WHEN k % 3 = 0 THEN ${stamp(hourMs - 30 * DAY)} END,
         CASE WHEN k % 50 = 0 THEN 'paused' ELSE 'active' END,
         IF(k % 3 = 2, ${stamp(berlin3)}, ${stamp(hourMs + HOUR)}),
         k % 7, ${stamp(`${base - 30 * DAY} + k * 1000`)}, UTC_TIMESTAMP(3)
       FROM (SELECT seq AS k FROM seq_1_to_${plan.schedules}) s`,
    );
    // Each schedule's last occurrence; three schedules stopped by a dead-lettered occurrence.
    await query(
      `UPDATE ${t.schedules} s JOIN (
         SELECT schedule_id, id, scheduled_for, ROW_NUMBER() OVER (PARTITION BY schedule_id ORDER BY scheduled_for DESC) AS n
         FROM ${t.jobs} WHERE schedule_id IS NOT NULL) x ON x.schedule_id = s.id AND x.n = 1
       SET s.last_job_id = x.id, s.last_fired_for = x.scheduled_for`,
    );
    const halted = await query(
      `SELECT schedule_id, id FROM (
         SELECT schedule_id, id, scheduled_for, ROW_NUMBER() OVER (PARTITION BY schedule_id ORDER BY scheduled_for DESC) AS n
         FROM ${t.jobs} WHERE schedule_id IS NOT NULL AND state = 'dead_lettered') x WHERE n = 1 ORDER BY schedule_id LIMIT 3`,
    );
    for (const h of halted) await query(`UPDATE ${t.schedules} SET state = 'dead_lettered', halted_job_id = ? WHERE id = ?`, [h.id, h.schedule_id]);
    const actions = ['job.cancel', 'job.replay', 'queue.pause', 'queue.resume', 'schedule.trigger', 'schedule.pause'];
    await query(
      `INSERT INTO ${t.audit} (at, actor, action, target, detail)
       SELECT ${stamp(`${base - 30 * DAY} + k * ${Math.floor((30 * DAY) / plan.audit)}`)},
         ${pick(['dashboard:alice@ops-1', 'cli:bob@laptop', 'client:deploy-bot'], 'k')}, ${pick(actions, 'k')},
         CASE WHEN k % 6 < 2 THEN CONCAT('job ', UUID()) WHEN k % 6 < 4 THEN CONCAT('queue ', ${pick(QUEUES, 'k')})
              ELSE CONCAT('schedule ', ${scheduleIdSql(`1 + k % ${plan.schedules}`)}) END,
         IF(k % 6 = 0, '{"reason":"stuck after deploy"}', NULL)
       FROM (SELECT seq AS k FROM seq_1_to_${plan.audit}) s`,
    );
  });
  return { base, phases };
}

/** What the database holds: jobs per (queue, state) counted from the table, and the sizes of the rest. */
export async function censusMysql(query, t, database) {
  const rows = await query(`SELECT queue, state, COUNT(*) AS n FROM ${t.jobs} GROUP BY queue, state`);
  const byState = {};
  for (const r of rows) byState[r.state] = (byState[r.state] ?? 0) + Number(r.n);
  const [c] = await query(
    `SELECT (SELECT COUNT(*) FROM ${t.history}) AS history,
            (SELECT COUNT(*) FROM ${t.dependencies} WHERE NOT settled) AS open_edges,
            (SELECT COUNT(*) FROM ${t.dependencies} WHERE settled) AS settled_edges,
            (SELECT COUNT(*) FROM ${t.schedules}) AS schedules,
            (SELECT COUNT(*) FROM ${t.audit}) AS audit,
            (SELECT COUNT(*) FROM ${t.jobs} WHERE finished_at >= UTC_TIMESTAMP(3) - INTERVAL 1 HOUR) AS finished_last_hour`,
  );
  const sizes = await query(`SELECT table_name AS name, data_length + index_length AS bytes FROM information_schema.tables WHERE table_schema = ?`, [database]);
  const mb = (suffix) => Math.round(Number(sizes.find((r) => r.name.endsWith(suffix))?.bytes ?? 0) / 1048576);
  return {
    perQueueState: rows.map((r) => ({ queue: r.queue, state: r.state, count: Number(r.n) })),
    jobs: byState,
    totalJobs: Object.values(byState).reduce((a, b) => a + b, 0),
    queues: new Set(rows.map((r) => r.queue)).size,
    history: Number(c.history),
    openEdges: Number(c.open_edges),
    settledEdges: Number(c.settled_edges),
    schedules: Number(c.schedules),
    audit: Number(c.audit),
    finishedLastHour: Number(c.finished_last_hour),
    jobsMB: mb('_jobs'),
    historyMB: mb('_job_history'),
  };
}

/** pages.mjs's findTargets in MySQL: the records the pages show, found once, untimed. */
export async function findTargetsMysql({ query, t, store }) {
  const one = async (text, params = []) => {
    const [row] = await query(text, params);
    if (!row) throw new Error(`no target for: ${text.replace(/\s+/g, ' ').slice(0, 160)}`);
    return row.id;
  };
  const first = await store.jobListPage({ limit: 50 });
  const schedules = await store.scheduleList({ limit: 50 });
  return {
    queue: 'billing',
    secondPage: first.next,
    succeeded: await one(`SELECT id FROM ${t.jobs} WHERE state = 'succeeded' ORDER BY seq DESC LIMIT 1`),
    deadLettered: await one(`SELECT id FROM ${t.jobs} WHERE state = 'dead_lettered' ORDER BY finished_at DESC, seq DESC LIMIT 1`),
    limited: await one(
      `SELECT id FROM ${t.jobs} WHERE state = 'scheduled' AND run_at <= UTC_TIMESTAMP(3) AND queue = ? AND concurrency_key = ? ORDER BY run_at, seq LIMIT 1`,
      [FULL_QUEUE, FULL_KEY],
    ),
    awaiting: await one(`SELECT id FROM ${t.jobs} WHERE state = 'awaiting_parents' AND name <> 'report.part' ORDER BY seq DESC LIMIT 1`),
    fanoutParent: await one(`SELECT id FROM ${t.jobs} WHERE state = 'scheduled' AND name = 'report.build' AND queue = 'reports' ORDER BY seq DESC LIMIT 1`),
    delayed: await one(`SELECT id FROM ${t.jobs} WHERE state = 'scheduled' AND run_at > UTC_TIMESTAMP(3) + INTERVAL 1 HOUR ORDER BY seq DESC LIMIT 1`),
    running: await one(`SELECT id FROM ${t.jobs} WHERE state = 'running' AND queue = ? ORDER BY seq DESC LIMIT 1`, [FULL_QUEUE]),
    schedulesAfter: schedules[schedules.length - 1].id,
    schedule: await one(`SELECT id FROM ${t.schedules} WHERE state = 'active' AND cron IS NOT NULL AND last_job_id IS NOT NULL ORDER BY created_at DESC LIMIT 1`),
    haltedSchedule: await one(`SELECT id FROM ${t.schedules} WHERE state = 'dead_lettered' ORDER BY created_at LIMIT 1`),
  };
}
