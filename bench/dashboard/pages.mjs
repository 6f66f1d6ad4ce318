// The pages the dashboard bench times, and the jobs and schedules they show. A new page is one
// line in PAGES; a page about one record names it through `targets` (found once, untimed).
import { FULL_KEY, FULL_QUEUE, RARE_NAME } from './prefill.mjs';

const q = (params) => `?${new URLSearchParams(params)}`;

/** Each page: a short name for the table, and its path given the targets. */
export const PAGES = [
  { name: 'overview', path: () => '/' },
  { name: 'jobs', path: () => '/jobs' },
  { name: 'jobs, dead-lettered', path: () => `/jobs${q({ state: 'dead_lettered' })}` },
  { name: 'jobs, scheduled', path: () => `/jobs${q({ state: 'scheduled' })}` },
  { name: 'jobs, queue', path: (t) => `/jobs${q({ queue: t.queue })}` },
  { name: 'jobs, rare name', path: () => `/jobs${q({ name: RARE_NAME })}` },
  { name: 'jobs, page 2 (before)', path: (t) => `/jobs${q({ before: t.secondPage })}` },
  { name: 'jobs, oldest first', path: () => `/jobs${q({ order: 'oldest' })}` },
  { name: 'jobs, id prefix', path: (t) => `/jobs${q({ id: t.succeeded.slice(0, 13) })}` },
  { name: 'jobs, enqueued in an hour', path: () => `/jobs${q({ from: new Date(Date.now() - 7_200_000).toISOString().slice(0, 16), to: new Date(Date.now() - 3_600_000).toISOString().slice(0, 16) })}` },
  { name: 'job: succeeded', path: (t) => `/jobs/${t.succeeded}` },
  { name: 'job: dead-lettered', path: (t) => `/jobs/${t.deadLettered}` },
  { name: 'job: waiting, limits full', path: (t) => `/jobs/${t.limited}` },
  { name: 'job: awaiting parents', path: (t) => `/jobs/${t.awaiting}` },
  { name: 'job: parent of 2,000', path: (t) => `/jobs/${t.fanoutParent}` },
  { name: 'job: running', path: (t) => `/jobs/${t.running}` },
  { name: 'cancel confirm', path: (t) => `/jobs/${t.limited}/cancel` },
  { name: 'run-now confirm', path: (t) => `/jobs/${t.delayed}/run-now` },
  { name: 'queue page', path: (t) => `/queues/${t.queue}` },
  { name: 'queue page, default', path: () => '/queues/default' },
  { name: 'dead letters', path: () => '/dead-letters' },
  { name: 'schedules', path: () => '/schedules' },
  { name: 'schedules, page 2', path: (t) => `/schedules${q({ after: t.schedulesAfter })}` },
  { name: 'schedule', path: (t) => `/schedules/${t.schedule}` },
  { name: 'schedule, dead-lettered', path: (t) => `/schedules/${t.haltedSchedule}` },
  { name: 'limits', path: () => '/limits' },
  { name: 'audit', path: () => '/audit' },
  { name: 'workers', path: () => '/workers' },
  { name: 'observers', path: () => '/observers' },
];

/**
 * The records the pages show, each found the way an operator would reach it (the newest of its
 * kind), through the store's indexes where one serves. Untimed.
 */
export async function findTargets({ query, t, store }) {
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
      `SELECT id FROM ${t.jobs} WHERE state = 'scheduled' AND run_at <= now() AND queue = $1 AND concurrency_key = $2 ORDER BY run_at, seq LIMIT 1`,
      [FULL_QUEUE, FULL_KEY],
    ),
    // A dependant with one parent, not one of the fan-out's 2,000 (those are newer).
    awaiting: await one(`SELECT id FROM ${t.jobs} WHERE state = 'awaiting_parents' AND name <> 'report.part' ORDER BY seq DESC LIMIT 1`),
    fanoutParent: await one(`SELECT id FROM ${t.jobs} WHERE state = 'scheduled' AND name = 'report.build' AND queue = 'reports' ORDER BY seq DESC LIMIT 1`),
    delayed: await one(`SELECT id FROM ${t.jobs} WHERE state = 'scheduled' AND run_at > now() + interval '1 hour' ORDER BY seq DESC LIMIT 1`),
    running: await one(`SELECT id FROM ${t.jobs} WHERE state = 'running' AND queue = $1 ORDER BY seq DESC LIMIT 1`, [FULL_QUEUE]),
    schedulesAfter: schedules[schedules.length - 1].id,
    schedule: await one(`SELECT id FROM ${t.schedules} WHERE state = 'active' AND cron IS NOT NULL AND last_job_id IS NOT NULL ORDER BY created_at DESC LIMIT 1`),
    haltedSchedule: await one(`SELECT id FROM ${t.schedules} WHERE state = 'dead_lettered' ORDER BY created_at LIMIT 1`),
  };
}

/**
 * Store reads timed on their own, the same way: the throughput chart's read, which the overview
 * and the queue pages run, so that its share of their time shows.
 */
export const READS = [
  { name: 'read: throughput, last hour by minute', run: (store) => store.jobThroughput({ since: new Date(Date.now() - 3_600_000), bucketMs: 60_000 }) },
];
