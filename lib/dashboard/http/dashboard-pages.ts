import { InvalidArgumentError, isDeadLetterState, isJobState, JobNotFoundError, ScheduleNotFoundError, type JobState } from '../../core/index.js';
import { html, href, type SafeHtml } from '../html/html.js';
import type { PageContext } from '../html/layout.js';
import { confirmPage } from '../pages/confirm.page.js';
import { deadLettersPage, groupDeadLetters } from '../pages/dead-letters.page.js';
import { jobActions, jobPage } from '../pages/job.page.js';
import { jobsPage, type JobFilters } from '../pages/jobs.page.js';
import { auditPage, limitsPage, type LimitUse, type RateUse } from '../pages/limits-audit.page.js';
import { observersPage } from '../pages/observers.page.js';
import { overviewPage } from '../pages/overview.page.js';
import { queuePage } from '../pages/queue.page.js';
import { workersPage } from '../pages/workers.page.js';
import { liveNodes } from '../why/live-nodes.js';
import { scheduleActions, schedulePage, schedulesPage, type ScheduleAction } from '../pages/schedules.page.js';
import { gatherWaitFacts } from '../why/gather-wait-facts.js';
import { waitReasons } from '../why/wait-reasons.js';
import { BULK_COPY, bulkActionOf, bulkIds, bulkTargets } from './bulk-actions.js';
import { DashboardHttpError, type DashboardRequest } from './dashboard-request.js';
import type { DashboardStore } from './dashboard-store.js';
import type { LimitTarget } from '../../store/index.js';

const MINUTE_MS = 60_000;

/** The start of the chart's first bucket: 59 whole minutes before the current one, so the bars are clock minutes. */
function lastHour(now: Date): Date {
  return new Date(Math.floor(now.getTime() / MINUTE_MS) * MINUTE_MS - 59 * MINUTE_MS);
}

/** How many of a schedule's recent occurrences its page lists. */
const RECENT_OCCURRENCES = 10;

/** How many limits the limits page shows, and how many holders of each. */
const LIMITS_SHOWN = 100;
const HOLDERS_SHOWN = 10;

/** How many dead letters the dead-letter page reads and groups. */
export const DEAD_LETTERS_SHOWN = 500;
/** What the page reader needs besides the request. */
export interface PageDeps {
  readonly store: DashboardStore;
  readonly ctx: PageContext;
  /** Whether this dashboard may reveal payloads (false in read-only mode unless allowed). */
  readonly payloadRevealable: boolean;
}

/** A form's `YYYY-MM-DDTHH:MM[:SS]` read as UTC, or a full ISO instant; a bad one is refused in one sentence. */
export function utcInput(value: string | undefined, name: string): Date | undefined {
  if (value === undefined) return undefined;
  const text = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/.test(value) ? `${value}Z` : value;
  const at = new Date(text);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(at.getTime())) throw new InvalidArgumentError(`${name} must be a date and time such as 2026-12-01T09:30 (UTC), got ${JSON.stringify(value.slice(0, 40))}.`, name);
  return at;
}

function optional(query: URLSearchParams, name: string): string | undefined {
  const value = query.get(name)?.trim();
  return value ? value : undefined;
}

function cancelConsequence(state: JobState): string {
  if (state === 'running') return 'It is running: it will be asked to stop, and ends cancelled when its attempt does. Its dependants that wait on its success are cancelled too.';
  if (isDeadLetterState(state)) {
    return 'It ends cancelled and leaves the dead-letter list for good: it keeps its error and history, can no longer be replayed, and retention deletes it like any cancelled job.';
  }
  return 'It will not run. Its dependants that wait on its success are cancelled too.';
}

async function jobOf(store: DashboardStore, jobId: string) {
  const job = await store.jobGet({ jobId });
  if (!job) throw new JobNotFoundError(jobId);
  return job;
}

async function scheduleOf(store: DashboardStore, scheduleId: string) {
  const schedule = await store.scheduleGet({ scheduleId });
  if (!schedule) throw new ScheduleNotFoundError(scheduleId);
  return schedule;
}

/** True for a path segment that names a schedule action. */
export function isScheduleAction(action: string | undefined): action is ScheduleAction {
  return action === 'pause' || action === 'resume' || action === 'trigger' || action === 'replay';
}

function refuseInReadOnly(ctx: PageContext): void {
  if (ctx.readOnly) throw new DashboardHttpError(403, 'This dashboard is read-only: it performs no actions.');
}

/** A listed limit's target. */
function targetOf(limit: LimitTarget): LimitTarget {
  return 'queue' in limit ? { queue: limit.queue } : { key: limit.key };
}

/** Reads for each item, four at a time, so a page of many limits does not take the pool's connections from the workers. */
async function fewAtATime<T, R>(items: readonly T[], read: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += 4) results.push(...(await Promise.all(items.slice(i, i + 4).map(read))));
  return results;
}

/** Renders the page a GET asks for, or null when no page lives at that address. */
export async function renderPage(deps: PageDeps, req: DashboardRequest): Promise<SafeHtml | null> {
  const { store, ctx } = deps;
  const [section, id, action, ...extra] = req.segments;
  if (extra.length > 0) return null;
  switch (section) {
    case undefined: {
      // The counts come from the queue listing, and the oldest due job, the due counts and the clock
      // from one oldest-due read: jobStats would read the counts and probe the oldest job again.
      const [queues, oldestDue, nodes] = await Promise.all([store.queueList(), store.queueOldestDue(), store.nodeList({ limit: 1_000 })]);
      const throughput = await store.jobThroughput({ since: lastHour(oldestDue.now), bucketMs: MINUTE_MS });
      return overviewPage(ctx, { queues, oldestDue, throughput, runningNodes: liveNodes(nodes, oldestDue.now).length });
    }
    case 'workers': {
      if (id !== undefined) return null;
      const [nodes, stats] = await Promise.all([store.nodeList({ limit: 200 }), store.jobStats()]);
      return workersPage(ctx, nodes, stats.now);
    }
    case 'jobs': {
      if (id === undefined) {
        const state = optional(req.query, 'state');
        if (state !== undefined && !isJobState(state)) throw new InvalidArgumentError(`state must be one of the job states, got ${JSON.stringify(state.slice(0, 40))}.`, 'state');
        const order = optional(req.query, 'order') === 'oldest' ? 'oldest' : 'newest';
        const cursor = optional(req.query, order === 'oldest' ? 'after' : 'before');
        const filters: JobFilters = { state, queue: optional(req.query, 'queue'), name: optional(req.query, 'name'), id: optional(req.query, 'id'), from: optional(req.query, 'from'), to: optional(req.query, 'to'), order: order === 'oldest' ? 'oldest' : undefined, cursor };
        const page = await store.jobListPage({
          state: state as JobState | undefined,
          queue: filters.queue,
          name: filters.name,
          idPrefix: filters.id,
          enqueuedAfter: utcInput(filters.from, 'from'),
          enqueuedBefore: utcInput(filters.to, 'to'),
          order,
          limit: 50,
          ...(cursor ? (order === 'oldest' ? { after: cursor } : { before: cursor }) : {}),
        });
        return jobsPage(ctx, filters, page);
      }
      if (id === 'cancel' && action === undefined) {
        refuseInReadOnly(ctx);
        const ids = bulkIds(req.query);
        return confirmPage(ctx, {
          section: 'jobs',
          question: `Cancel ${ids.length} ${ids.length === 1 ? 'job' : 'jobs'}?`,
          consequence:
            'Each waiting job ends cancelled at once, and a running one is asked to stop and ends cancelled when its attempt does. Their dependants that wait on their success are cancelled too. A job that finished since the page was drawn is left as it is.',
          action: href(ctx.base, ['jobs', 'cancel']),
          verb: `Cancel ${ids.length}`,
          back: href(ctx.base, ['jobs']),
          fields: [['confirmed', '1'], ...ids.map((jobId) => ['id', jobId] as const)],
          targets: bulkTargets(ids),
        });
      }
      const job = await jobOf(store, id);
      if (action === undefined) {
        const wantsPayload = req.query.get('reveal') === 'payload';
        if (wantsPayload && !deps.payloadRevealable) throw new DashboardHttpError(403, 'This read-only dashboard does not reveal payloads.');
        const [history, edges, facts] = await Promise.all([
          store.jobHistory({ jobId: id }),
          store.jobEdges({ jobId: id, limit: 100 }),
          gatherWaitFacts(store, job),
        ]);
        const now = facts?.now ?? ctx.now;
        return jobPage(ctx, { job, history, edges, now, reasons: facts ? waitReasons(facts) : null, payloadShown: wantsPayload, payloadRevealable: deps.payloadRevealable });
      }
      if (action !== 'cancel' && action !== 'replay' && action !== 'run-now') return null;
      refuseInReadOnly(ctx);
      const back = href(ctx.base, ['jobs', id]);
      // A job that has not run yet is compared with the store's clock, as the store will.
      const now = action === 'run-now' ? (await store.queueOldestDue({ queues: [job.queue] })).now : ctx.now;
      if (!jobActions(job, now).includes(action)) {
        const state = job.state.replace(/_/g, ' ');
        throw new DashboardHttpError(409, action === 'run-now' ? `This job is ${state} and not waiting for a later time, so there is nothing to run now.` : `This job is ${state}, so it cannot be ${action === 'cancel' ? 'cancelled' : 'replayed'}.`);
      }
      const copy = {
        cancel: ['Cancel this job?', cancelConsequence(job.state), 'Cancel the job'],
        replay: ['Replay this job?', 'It becomes due now with its attempts reset to zero and its error cleared.', 'Replay the job'],
        'run-now': ['Run this job now?', job.attempt > 0 ? `It becomes due now instead of waiting for its retry; it keeps its ${job.attempt} spent ${job.attempt === 1 ? 'attempt' : 'attempts'}.` : 'It becomes due now instead of at its run time.', 'Run it now'],
      } as const;
      const [question, consequence, verb] = copy[action];
      // The cancel the operator confirms is the one asked: discarding a dead letter, or stopping
      // work that waits or runs. The action refuses the other if the job moved in between.
      const fields = action === 'cancel' ? [['cancelling', isDeadLetterState(job.state) ? 'dead_letter' : 'work'] as const] : [];
      return confirmPage(ctx, { section: 'jobs', question, consequence, action: `${back}/${action}`, verb, back, fields, targets: [html`<code>${job.name}</code> ${job.id}`] });
    }
    case 'dead-letters': {
      if (id === undefined) return deadLettersPage(ctx, await store.jobListDeadLettered({ limit: DEAD_LETTERS_SHOWN }), DEAD_LETTERS_SHOWN);
      const bulk = bulkActionOf(id);
      if (bulk === null || action !== undefined) return null;
      refuseInReadOnly(ctx);
      // A group is named by its job name and error line and read again here, so its link stays
      // short however large the group; a selection arrives as the ids of a POSTed form.
      const name = req.query.get('name');
      const ids =
        name === null
          ? bulkIds(req.query)
          : groupDeadLetters(await store.jobListDeadLettered({ limit: DEAD_LETTERS_SHOWN }))
              .filter((group) => group.name === name && group.error === (req.query.get('error') ?? ''))
              .flatMap((group) => group.jobs.map((job) => job.id));
      if (ids.length === 0) throw new DashboardHttpError(409, `No dead letter of that name and error is left among the most recent; nothing to ${bulk}.`);
      const { consequence, verb } = BULK_COPY[bulk];
      return confirmPage(ctx, {
        section: 'dead-letters',
        question: `${verb} ${ids.length} dead ${ids.length === 1 ? 'letter' : 'letters'}?`,
        consequence,
        action: href(ctx.base, ['dead-letters', bulk]),
        verb: `${verb} ${ids.length}`,
        back: href(ctx.base, ['dead-letters']),
        fields: [['confirmed', '1'], ...ids.map((jobId) => ['id', jobId] as const)],
        targets: bulkTargets(ids),
      });
    }
    case 'queues': {
      if (id === undefined) return null;
      if (action === undefined) {
        const [queues, oldest, limit, rate, nodes] = await Promise.all([
          store.queueList(),
          store.queueOldestDue({ queues: [id] }),
          store.limitHolders({ target: { queue: id }, limit: 1_000 }),
          store.rateLimitStatus({ target: { queue: id } }),
          store.nodeList({ limit: 1_000 }),
        ]);
        const throughput = await store.jobThroughput({ since: lastHour(oldest.now), bucketMs: MINUTE_MS, queue: id });
        return queuePage(ctx, {
          name: id,
          summary: queues.find((queue) => queue.name === id) ?? null,
          oldestDueAt: oldest.queues[0]?.oldestDueAt ?? null,
          due: { count: oldest.queues[0]?.dueCount ?? 0, bounded: oldest.examinedUntil !== null },
          limit,
          rate,
          nodes: liveNodes(nodes, oldest.now).filter((node) => node.queues.includes(id)),
          throughput,
        });
      }
      if (action !== 'pause' && action !== 'resume') return null;
      refuseInReadOnly(ctx);
      return confirmPage(ctx, {
        section: '',
        question: `${action === 'pause' ? 'Pause' : 'Resume'} queue ${id}?`,
        consequence: action === 'pause' ? 'Workers stop claiming its jobs; running ones finish. Its jobs keep their places.' : 'Workers claim its due jobs again.',
        action: href(ctx.base, ['queues', id, action]),
        verb: action === 'pause' ? 'Pause the queue' : 'Resume the queue',
        back: ctx.base || '/',
      });
    }
    case 'schedules': {
      if (id === undefined) {
        const after = optional(req.query, 'after') ?? null;
        const schedules = await store.scheduleList({ limit: 50, ...(after ? { after } : {}) });
        return schedulesPage(ctx, schedules, schedules.length === 50 ? schedules[49]!.id : null, after);
      }
      const schedule = await scheduleOf(store, id);
      if (action === undefined) {
        const [lastJob, haltedJob, named] = await Promise.all([
          schedule.lastJobId ? store.jobGet({ jobId: schedule.lastJobId }) : null,
          schedule.haltedJobId ? store.jobGet({ jobId: schedule.haltedJobId }) : null,
          // Its recent occurrences: the newest jobs of its name (one bounded page), kept when this schedule minted them.
          store.jobListPage({ name: schedule.name, queue: schedule.queue, limit: 100 }),
        ]);
        const recent = named.jobs.filter((job) => job.scheduleId === schedule.id).slice(0, RECENT_OCCURRENCES);
        return schedulePage(ctx, { schedule, lastJob, haltedJob, recent });
      }
      if (!isScheduleAction(action)) return null;
      refuseInReadOnly(ctx);
      if (!scheduleActions(schedule).includes(action)) throw new DashboardHttpError(409, `This schedule is ${schedule.state.replace(/_/g, ' ')}, so it cannot be ${action === 'replay' ? 'replayed' : `${action}d`}.`);
      const back = href(ctx.base, ['schedules', id]);
      return confirmPage(ctx, {
        section: 'schedules',
        question: `${action[0]!.toUpperCase()}${action.slice(1)} this schedule?`,
        consequence:
          action === 'pause'
            ? 'It mints no occurrences until resumed; ticks in between are not made up.'
            : action === 'resume'
              ? 'It mints again from its next tick; ticks missed while it was stopped are not made up.'
              : action === 'replay'
                ? 'It mints again, and the occurrence that stopped it, unless it was discarded since, becomes due now with its attempts reset.'
                : 'One occurrence is enqueued now, besides its regular ticks.',
        action: `${back}/${action}`,
        verb: `${action[0]!.toUpperCase()}${action.slice(1)} the schedule`,
        back,
        targets: [html`<code>${schedule.name}</code> ${schedule.id}`],
      });
    }
    case 'limits': {
      if (id !== undefined) return null;
      const [limits, rateLimits] = await Promise.all([store.concurrencyLimitList(), store.rateLimitList()]);
      const shown = limits.slice(0, LIMITS_SHOWN);
      const shownRates = rateLimits.slice(0, LIMITS_SHOWN);
      const uses: LimitUse[] = await fewAtATime(shown, async (limit) => ({ limit, use: await store.limitHolders({ target: targetOf(limit), limit: HOLDERS_SHOWN }) }));
      const rates: RateUse[] = await fewAtATime(shownRates, async (limit) => ({ limit, status: await store.rateLimitStatus({ target: targetOf(limit) }) }));
      return limitsPage(ctx, uses, limits.length - shown.length, rates, rateLimits.length - shownRates.length);
    }
    case 'observers':
      return id === undefined ? observersPage(ctx, await store.observerList({ limit: 200 })) : null;
    case 'audit':
      return id === undefined ? auditPage(ctx, await store.auditList({ limit: 200 })) : null;
    default:
      return null;
  }
}
