import { assertQueueName, assertUuid, ScheduleNotFoundError } from '../../core/index.js';
import { html, href, type SafeHtml } from '../html/html.js';
import { confirmPage } from '../pages/confirm.page.js';
import { deadLettersPage, groupDeadLetters } from '../pages/dead-letters.page.js';
import { auditPage, limitsPage, type LimitUse, type RateUse } from '../pages/limits-audit.page.js';
import { observersPage } from '../pages/observers.page.js';
import { overviewPage, QUEUES_PER_PAGE } from '../pages/overview.page.js';
import { queuePage } from '../pages/queue.page.js';
import { workersPage } from '../pages/workers.page.js';
import { liveNodes } from '../why/live-nodes.js';
import { whatIsKept } from './what-is-kept.js';
import { scheduleActions, schedulePage, schedulesPage, type ScheduleAction } from '../pages/schedules.page.js';
import { sequencesPage, SEQUENCES_PER_PAGE } from '../pages/sequences.page.js';
import { groupsPage, GROUPS_PER_PAGE } from '../pages/groups.page.js';
import { guaranteesPage, GUARANTEE_RUNS_SHOWN } from '../pages/guarantees.page.js';
import { readVerifyRuns } from '../../verify/index.js';
import { batchCancellable, batchesPage, batchPage, BATCHES_PER_PAGE, FAILED_SHOWN, MORE_FAILED_SHOWN, openCallbacks } from '../pages/batches.page.js';
import { BULK_COPY, bulkActionOf, bulkIds, bulkTargets, SEQUENCE_COPY } from './bulk-actions.js';
import { DashboardHttpError, type DashboardRequest } from './dashboard-request.js';
import type { DashboardStore } from './dashboard-store.js';
import { renderJobRoute } from './job-routes.js';
import { optional, refuseInReadOnly, type PageDeps } from './page-deps.js';
import type { BatchSummary, LimitTarget } from '../../store/index.js';

export type { PageDeps } from './page-deps.js';

const MINUTE_MS = 60_000;

/** The start of the chart's first bucket: 59 whole minutes before the current one, so the bars are clock minutes. */
function lastHour(now: Date): Date {
  return new Date(Math.floor(now.getTime() / MINUTE_MS) * MINUTE_MS - 59 * MINUTE_MS);
}

/** How many of a schedule's recent occurrences its page lists. */
const RECENT_OCCURRENCES = 10;

/** How many limits the limits page shows at once, and how many holders of each. */
const LIMITS_SHOWN = 100;
const HOLDERS_SHOWN = 10;

/** How many dead letters the dead-letter page reads and groups. */
export const DEAD_LETTERS_SHOWN = 500;

/** How many rows the workers, observers and audit pages show, and how many when asked for more (the stores' most). */
const ROWS_SHOWN = 200;
const MORE_ROWS_SHOWN = 1_000;

/** A batch by the id in the address, or a 404 when no stored job has it; a malformed id is a 400. */
export async function batchOf(store: DashboardStore, id: string, failedLimit = 0): Promise<BatchSummary> {
  const batchId = assertUuid(id, 'batch id');
  const batch = await store.jobBatch({ batchId, failedLimit });
  if (!batch) throw new DashboardHttpError(404, `No batch with id ${batchId} is stored: it never existed, or retention deleted all of its jobs.`);
  return batch;
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

/** A listed limit's target. */
function targetOf(limit: LimitTarget): LimitTarget {
  return 'queue' in limit ? { queue: limit.queue } : { key: limit.key };
}

/** A limit page's cursor in the address: `queue:<name>` or `key:<key>`, as the link wrote it. */
function targetCursor(value: string | undefined): LimitTarget | undefined {
  if (value === undefined) return undefined;
  if (value.startsWith('queue:')) return { queue: value.slice('queue:'.length) };
  if (value.startsWith('key:')) return { key: value.slice('key:'.length) };
  throw new DashboardHttpError(400, 'A limits page starts after a queue: or key: target.');
}

/** Reads for each item, four at a time, so a page of many limits does not take the pool's connections from the workers. */
async function fewAtATime<T, R>(items: readonly T[], read: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += 4) results.push(...(await Promise.all(items.slice(i, i + 4).map(read))));
  return results;
}

/** How many rows a listing shows: {@link ROWS_SHOWN}, or {@link MORE_ROWS_SHOWN} when the page's "show more" link asked. */
function rowsShown(query: URLSearchParams): number {
  return query.get('more') === '1' ? MORE_ROWS_SHOWN : ROWS_SHOWN;
}

/** Renders the page a GET asks for, or null when no page lives at that address. */
export async function renderPage(deps: PageDeps, req: DashboardRequest): Promise<SafeHtml | null> {
  const { store, ctx } = deps;
  const [section, id, action, ...extra] = req.segments;
  if (section === 'jobs') return renderJobRoute(deps, req);
  if (extra.length > 0) return null;
  switch (section) {
    case undefined: {
      // A page of queues by name, read one past the page to tell whether more follow; the totals
      // are summed by the store, and the oldest due job, the due counts and the clock come from one
      // oldest-due read.
      const after = optional(req.query, 'after');
      const [page, totals, oldestDue, nodes, health] = await Promise.all([
        store.queueList({ limit: QUEUES_PER_PAGE + 1, ...(after === undefined ? {} : { after: assertQueueName(after, 'after') }) }),
        store.jobCountTotals(),
        store.queueOldestDue(),
        store.nodeList({ limit: 1_000 }),
        store.storeHealth(),
      ]);
      const throughput = await store.jobThroughput({ since: lastHour(oldestDue.now), bucketMs: MINUTE_MS });
      const queues = page.slice(0, QUEUES_PER_PAGE);
      const kept = whatIsKept(nodes, oldestDue.now);
      return overviewPage(ctx, {
        queues,
        totals,
        after: after ?? null,
        next: page.length > QUEUES_PER_PAGE ? queues.at(-1)!.name : null,
        oldestDue,
        throughput,
        runningNodes: kept.running,
        kept: kept.sentence,
        health,
      });
    }
    case 'workers': {
      if (id !== undefined) return null;
      const limit = rowsShown(req.query);
      const [nodes, oldest] = await Promise.all([store.nodeList({ limit }), store.queueOldestDue({ queues: [] })]);
      return workersPage(ctx, nodes, oldest.now, { shown: limit, more: limit < MORE_ROWS_SHOWN }, deps.handlers?.());
    }
    case 'dead-letters': {
      if (id === undefined) {
        // One blocked sequence is enough to point at the sequences page, where the rest are.
        const [jobs, blocked] = await Promise.all([store.jobListDeadLettered({ limit: DEAD_LETTERS_SHOWN }), store.jobListBlockedSequences({ limit: 1 })]);
        return deadLettersPage(ctx, jobs, DEAD_LETTERS_SHOWN, req.query, blocked.length > 0);
      }
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
        tone: bulk === 'cancel' ? 'danger' : 'primary',
        back: href(ctx.base, ['dead-letters']),
        fields: [['confirmed', '1'], ...ids.map((jobId) => ['id', jobId] as const)],
        targets: bulkTargets(ids),
      });
    }
    case 'sequences': {
      if (id === undefined) {
        // Not trimmed like other parameters: a sequence key may begin or end with a space.
        const after = req.query.get('after') || null;
        // One past the page, to tell whether another follows.
        const read = await store.jobListBlockedSequences({ limit: SEQUENCES_PER_PAGE + 1, ...(after === null ? {} : { after }) });
        const sequences = read.slice(0, SEQUENCES_PER_PAGE);
        return sequencesPage(ctx, { sequences, after, next: read.length > SEQUENCES_PER_PAGE ? sequences.at(-1)!.key : null });
      }
      const bulk = bulkActionOf(id);
      if (bulk === null || action !== undefined) return null;
      refuseInReadOnly(ctx);
      // A row's link names its one job in the address; a selection arrives as the ids of a POSTed form.
      const ids = bulkIds(req.query);
      const { consequence, verb } = SEQUENCE_COPY[bulk];
      return confirmPage(ctx, {
        section: 'sequences',
        question: `${verb} ${ids.length} ${ids.length === 1 ? 'job that blocks a sequence' : 'jobs that block sequences'}?`,
        consequence,
        action: href(ctx.base, ['sequences', bulk]),
        verb: `${verb} ${ids.length}`,
        tone: bulk === 'cancel' ? 'danger' : 'primary',
        back: href(ctx.base, ['sequences']),
        fields: [['confirmed', '1'], ...ids.map((jobId) => ['id', jobId] as const)],
        targets: bulkTargets(ids),
      });
    }
    case 'batches': {
      if (id === undefined) {
        const before = optional(req.query, 'before');
        // One past the page, to tell whether another follows.
        const read = await store.jobListBatches({ limit: BATCHES_PER_PAGE + 1, ...(before === undefined ? {} : { before: assertUuid(before, 'before') }) });
        const batches = read.slice(0, BATCHES_PER_PAGE);
        return batchesPage(ctx, { batches, before: before ?? null, next: read.length > BATCHES_PER_PAGE ? batches.at(-1)!.id : null });
      }
      if (action === undefined) {
        const failedShown = req.query.get('more') === '1' ? MORE_FAILED_SHOWN : FAILED_SHOWN;
        return batchPage(ctx, { batch: await batchOf(store, id, failedShown), failedShown });
      }
      if (action !== 'cancel') return null;
      refuseInReadOnly(ctx);
      const batch = await batchOf(store, id);
      if (!batchCancellable(batch)) throw new DashboardHttpError(409, 'Every job and callback of this batch has ended, so there is nothing to cancel.');
      const callbacks = openCallbacks(batch).length;
      const back = href(ctx.base, ['batches', batch.id]);
      return confirmPage(ctx, {
        section: 'batches',
        question: 'Cancel this batch?',
        consequence:
          'Every job of the batch that has not ended is cancelled, its callbacks first, so no callback runs: a waiting job ends cancelled at once, a running one is asked to stop and ends cancelled when its attempt does. Jobs that ended keep their state. Each cancel is audited on its own. A job that ends before the cancel reaches it is left as it is.',
        action: `${back}/cancel`,
        verb: 'Cancel the batch',
        tone: 'danger',
        back,
        targets: [html`batch <code>${batch.id}</code>: ${batch.pending} of ${batch.total} ${batch.total === 1 ? 'job' : 'jobs'} pending, ${callbacks} ${callbacks === 1 ? 'callback' : 'callbacks'} not ended`],
      });
    }
    case 'groups': {
      if (id !== undefined) return null;
      // Not trimmed like other parameters: a group may begin or end with a space.
      const after = req.query.get('after') || null;
      // One past the page, to tell whether another follows.
      const read = await store.jobListGroups({ limit: GROUPS_PER_PAGE + 1, ...(after === null ? {} : { after }) });
      const groups = read.slice(0, GROUPS_PER_PAGE);
      return groupsPage(ctx, { groups, after, next: read.length > GROUPS_PER_PAGE ? groups.at(-1)!.group : null });
    }
    case 'queues': {
      // `/queues?name=` is the overview's "open a queue" form: the queue's page, at an address a form can make.
      const name = id ?? (action === undefined ? optional(req.query, 'name') : undefined);
      if (name === undefined) return null;
      if (action === undefined) {
        const queue = assertQueueName(name, 'queue');
        const [summaries, oldest, limit, rate, nodes] = await Promise.all([
          store.queueList({ queues: [queue] }),
          store.queueOldestDue({ queues: [queue] }),
          store.limitHolders({ target: { queue }, limit: 1_000 }),
          store.rateLimitStatus({ target: { queue } }),
          store.nodeList({ limit: 1_000 }),
        ]);
        const throughput = await store.jobThroughput({ since: lastHour(oldest.now), bucketMs: MINUTE_MS, queue });
        const serving = liveNodes(nodes, oldest.now).filter((node) => node.queues.includes(queue));
        return queuePage(ctx, {
          name: queue,
          summary: summaries[0] ?? null,
          oldestDueAt: oldest.queues[0]?.oldestDueAt ?? null,
          due: { count: oldest.queues[0]?.dueCount ?? 0, bounded: oldest.examinedUntil !== null },
          limit,
          rate,
          nodes: serving,
          throughput,
          kept: whatIsKept(serving, oldest.now).sentence,
        });
      }
      if (action !== 'pause' && action !== 'resume') return null;
      refuseInReadOnly(ctx);
      return confirmPage(ctx, {
        section: '',
        question: `${action === 'pause' ? 'Pause' : 'Resume'} queue ${name}?`,
        consequence: action === 'pause' ? 'Workers stop claiming its jobs; running ones finish. Its jobs keep their places.' : 'Workers claim its due jobs again.',
        action: href(ctx.base, ['queues', name, action]),
        verb: action === 'pause' ? 'Pause the queue' : 'Resume the queue',
        tone: 'primary',
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
        tone: 'primary',
        back,
        targets: [html`<code>${schedule.name}</code> ${schedule.id}`],
      });
    }
    case 'limits': {
      if (id !== undefined) return null;
      // Each table pages on its own, read one past the page to tell whether more follow.
      const limitsAfter = targetCursor(optional(req.query, 'after'));
      const ratesAfter = targetCursor(optional(req.query, 'rates_after'));
      const [limits, rateLimits] = await Promise.all([
        store.concurrencyLimitList({ limit: LIMITS_SHOWN + 1, ...(limitsAfter ? { after: limitsAfter } : {}) }),
        store.rateLimitList({ limit: LIMITS_SHOWN + 1, ...(ratesAfter ? { after: ratesAfter } : {}) }),
      ]);
      const shown = limits.slice(0, LIMITS_SHOWN);
      const shownRates = rateLimits.slice(0, LIMITS_SHOWN);
      const uses: LimitUse[] = await fewAtATime(shown, async (limit) => ({ limit, use: await store.limitHolders({ target: targetOf(limit), limit: HOLDERS_SHOWN }) }));
      const rates: RateUse[] = await fewAtATime(shownRates, async (limit) => ({ limit, status: await store.rateLimitStatus({ target: targetOf(limit) }) }));
      return limitsPage(ctx, {
        limits: uses,
        rates,
        query: req.query,
        limitsNext: limits.length > LIMITS_SHOWN ? shown.at(-1)! : null,
        ratesNext: rateLimits.length > LIMITS_SHOWN ? shownRates.at(-1)! : null,
      });
    }
    case 'observers': {
      if (id !== undefined) return null;
      const limit = rowsShown(req.query);
      return observersPage(ctx, await store.observerList({ limit }), { shown: limit, more: limit < MORE_ROWS_SHOWN });
    }
    case 'guarantees': {
      if (id !== undefined) return null;
      return guaranteesPage(ctx, await readVerifyRuns(store, GUARANTEE_RUNS_SHOWN));
    }
    case 'audit': {
      if (id !== undefined) return null;
      const limit = rowsShown(req.query);
      return auditPage(ctx, await store.auditList({ limit }), { shown: limit, more: limit < MORE_ROWS_SHOWN });
    }
    default:
      return null;
  }
}
