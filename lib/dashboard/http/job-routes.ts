import { InvalidArgumentError, isDeadLetterState, isJobState, JobNotFoundError, type JobRecord, type JobState } from '../../core/index.js';
import { html, href, type SafeHtml } from '../html/html.js';
import { confirmPage } from '../pages/confirm.page.js';
import { isJobTextPart, jobActions, jobPage } from '../pages/job.page.js';
import { jobTextPage } from '../pages/job-text.page.js';
import { jobsPage, type JobFilters } from '../pages/jobs.page.js';
import { TIMELINE_PAGE, type TimelinePage } from '../pages/timeline.view.js';
import { gatherWaitFacts } from '../why/gather-wait-facts.js';
import { endedReasons, takesDebounce, waitReasons, waitsOutSnooze } from '../why/wait-reasons.js';
import { bulkIds, bulkTargets } from './bulk-actions.js';
import { DashboardHttpError, type DashboardRequest } from './dashboard-request.js';
import type { DashboardStore } from './dashboard-store.js';
import { optional, refuseInReadOnly, type PageDeps } from './page-deps.js';

/** A form's `YYYY-MM-DDTHH:MM[:SS]` read as UTC, or a full ISO instant; a bad one is refused in one sentence. */
export function utcInput(value: string | undefined, name: string): Date | undefined {
  if (value === undefined) return undefined;
  const text = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/.test(value) ? `${value}Z` : value;
  const at = new Date(text);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(at.getTime())) throw new InvalidArgumentError(`${name} must be a date and time such as 2026-12-01T09:30 (UTC), got ${JSON.stringify(value.slice(0, 40))}.`, name);
  return at;
}

function cancelConsequence(job: JobRecord): string {
  const { state } = job;
  // A sequence's next job is never cancelled with it: it runs when this one's turn has passed.
  const inSequence = job.sequence !== null;
  if (state === 'running') {
    return `It is running: it will be asked to stop, and ends cancelled when its attempt does. Its dependants that wait on its success are cancelled too.${inSequence ? ' The next job of its sequence runs after it.' : ''}`;
  }
  if (isDeadLetterState(state)) {
    return `It ends cancelled and leaves the dead-letter list for good: it keeps its error and history, can no longer be replayed, and retention deletes it like any cancelled job.${inSequence ? ' A job waiting behind it in its sequence is released at once.' : ''}`;
  }
  return `It will not run. Its dependants that wait on its success are cancelled too.${inSequence ? ' It keeps its place in its sequence: the job after it still waits for the jobs before this one.' : ''}`;
}

/** What a replay changes; a failed job that holds a sequence releases the next one only by succeeding. */
function replayConsequence(job: JobRecord): string {
  const base = 'It becomes due now with its attempts reset to zero and its error cleared.';
  return job.sequence === null ? base : `${base} A job waiting behind it in its sequence runs once it succeeds.`;
}

async function jobOf(store: DashboardStore, jobId: string) {
  const job = await store.jobGet({ jobId });
  if (!job) throw new JobNotFoundError(jobId);
  return job;
}

/** A history entry id from the address, or a one-sentence refusal. */
function entryId(value: string | undefined | null, name: string): number {
  const id = value === undefined || value === null ? NaN : Number(value);
  if (!/^[1-9]\d{0,15}$/.test(value ?? '') || !Number.isSafeInteger(id)) throw new InvalidArgumentError(`${name} must be a history entry's id, a whole number, got ${JSON.stringify(String(value).slice(0, 40))}.`, name);
  return id;
}

/** One page of a job's timeline: the newest {@link TIMELINE_PAGE} entries before `before`, read one past the page to tell whether earlier ones exist. */
async function timelinePage(store: DashboardStore, jobId: string, before: number | undefined): Promise<TimelinePage> {
  const read = await store.jobHistory({ jobId, limit: TIMELINE_PAGE + 1, ...(before === undefined ? {} : { before }) });
  const entries = read.length > TIMELINE_PAGE ? read.slice(1) : read;
  return { entries, earlierBefore: read.length > TIMELINE_PAGE ? entries[0]!.id : null, older: before !== undefined };
}

/** The pages below `/jobs`: the list, the bulk cancel question, a job, its texts and its action questions. */
export async function renderJobRoute(deps: PageDeps, req: DashboardRequest): Promise<SafeHtml | null> {
  const { store, ctx } = deps;
  const [, id, action, part, ...extra] = req.segments;
  if (extra.length > 0 || (part !== undefined && action !== 'history')) return null;
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
      tone: 'danger',
      back: href(ctx.base, ['jobs']),
      fields: [['confirmed', '1'], ...ids.map((jobId) => ['id', jobId] as const)],
      targets: bulkTargets(ids),
    });
  }
  const job = await jobOf(store, id);
  if (action === undefined) {
    // The live refresh swaps in the parts that change; a revealed payload is not one of them, so it is not read again.
    const wantsPayload = req.query.get('reveal') === 'payload' && !deps.refresh;
    if (wantsPayload && !deps.payloadRevealable) throw new DashboardHttpError(403, 'This read-only dashboard does not reveal payloads.');
    const before = req.query.get('before');
    const [history, edges, facts] = await Promise.all([
      timelinePage(store, id, before === null ? undefined : entryId(before, 'before')),
      store.jobEdges({ jobId: id, limit: 100 }),
      gatherWaitFacts(store, job),
    ]);
    const now = facts?.now ?? ctx.now;
    return jobPage(ctx, { job, history, edges, now, reasons: facts ? waitReasons(facts) : endedReasons(job), payloadShown: wantsPayload, payloadRevealable: deps.payloadRevealable });
  }
  if (isJobTextPart(action)) {
    if (action === 'payload' && !deps.payloadRevealable) throw new DashboardHttpError(403, 'This read-only dashboard does not reveal payloads.');
    return jobTextPage(ctx, job, action);
  }
  if (action === 'history') {
    if (part === undefined) return null;
    const wanted = entryId(part, 'entry');
    const [entry] = await store.jobHistory({ jobId: id, limit: 1, before: wanted + 1 });
    if (!entry || entry.id !== wanted) throw new DashboardHttpError(404, 'This job keeps no history entry of that id.');
    return jobTextPage(ctx, job, { entry });
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
    cancel: ['Cancel this job?', cancelConsequence(job), 'Cancel the job'],
    replay: ['Replay this job?', replayConsequence(job), 'Replay the job'],
    'run-now': ['Run this job now?', runNowText(job), 'Run it now'],
  } as const;
  const [question, consequence, verb] = copy[action];
  // The cancel the operator confirms is the one asked: discarding a dead letter, or stopping
  // work that waits or runs. The action refuses the other if the job moved in between.
  const fields = action === 'cancel' ? [['cancelling', isDeadLetterState(job.state) ? 'dead_letter' : 'work'] as const] : [];
  return confirmPage(ctx, { section: 'jobs', question, consequence, action: `${back}/${action}`, verb, tone: action === 'cancel' ? 'danger' : 'primary', back, fields, targets: [html`<code>${job.name}</code> ${job.id}`] });
}

/**
 * What running a waiting job now changes: its run time, and (a retry's) the attempts it has spent;
 * snoozed runs spent none. A debounced job stays debounced until a worker claims it.
 */
function runNowText(job: JobRecord): string {
  if (takesDebounce(job)) return 'It becomes due now instead of at its run time. Until a worker claims it, an enqueue with its debounce key still replaces its payload and pushes it later.';
  if (job.attempt === 0) return 'It becomes due now instead of at its run time.';
  if (waitsOutSnooze(job)) return 'It becomes due now instead of when its snooze ends.';
  const spent = job.attempt - job.snoozes;
  return `It becomes due now instead of waiting for its retry; it keeps its ${spent} spent ${spent === 1 ? 'attempt' : 'attempts'}.`;
}
