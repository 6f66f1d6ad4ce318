import { isDeadLetterState, isTerminalState, type JobRecord } from '../../core/index.js';
import type { JobEdges } from '../../store/index.js';
import { takesDebounce, type WaitReason } from '../why/wait-reasons.js';
import { edgesSection, waitReasonsSection } from './wait-reasons.view.js';
import { clippedPre } from '../html/clipped-text.js';
import { html, href, type SafeHtml } from '../html/html.js';
import { formatTime, layout, stateBadge, timeCell, type PageContext } from '../html/layout.js';
import { timelineSection, type TimelinePage } from './timeline.view.js';
import { CALLBACK_OPTION, CALLBACK_RULE } from './batches.page.js';

/** What the job page shows besides the job itself. */
export interface JobDetail {
  readonly job: JobRecord;
  /** One page of its history, the newest entries first read. */
  readonly history: TimelinePage;
  /** Show the payload (the operator asked, and the mode allows it). */
  readonly payloadShown: boolean;
  /** Whether this dashboard lets an operator reveal payloads at all. */
  readonly payloadRevealable: boolean;
  /**
   * What holds it back, for a job that has not finished; for a finished one, why it will not run
   * when its ending says so (an `on_failure` job cancelled because every parent succeeded), else empty or null.
   */
  readonly reasons: readonly WaitReason[] | null;
  readonly edges: JobEdges | null;
  /** The store's clock when the job was read. */
  readonly now: Date;
}

/** A text of a job that its page shows cut, and a page of its own shows whole. */
export type JobTextPart = 'payload' | 'output' | 'error' | 'progress';

/** True for a path segment that names a job's text. */
export function isJobTextPart(part: string | undefined): part is JobTextPart {
  return part === 'payload' || part === 'output' || part === 'error' || part === 'progress';
}

/** An operator's action on one job. */
export type JobAction = 'cancel' | 'replay' | 'run-now';

const ACTION_LABELS: Readonly<Record<JobAction, string>> = { cancel: 'Cancel', replay: 'Replay', 'run-now': 'Run now' };

/** The job actions an operator may ask for in its current state, `now` by the store's clock. */
export function jobActions(job: JobRecord, now: Date): readonly JobAction[] {
  if (isDeadLetterState(job.state)) return ['replay', 'cancel'];
  if (isTerminalState(job.state) || job.cancelRequested) return [];
  return job.state === 'scheduled' && job.runAt.getTime() > now.getTime() ? ['run-now', 'cancel'] : ['cancel'];
}

/**
 * JSON for a `<pre>`, two-space indented, or on one line with `indent` 0 (for a table cell, where
 * the escaper would show a newline as `\n`); a value JSON cannot hold shows as its type.
 */
export function prettyJson(value: unknown, indent = 2): string {
  try {
    return JSON.stringify(value, null, indent) ?? String(value);
  } catch {
    return `(${typeof value})`;
  }
}

function field(label: string, value: SafeHtml | string | number): SafeHtml {
  return html`<dt>${label}</dt><dd>${value}</dd>`;
}

/**
 * The debounce or throttle window the job opened at enqueue, or nothing. A debounced job takes the
 * enqueues of its wire name and key (their payload, and a later run time, never past the window's
 * end) while it is scheduled and has never been claimed; a throttle's opener drops those enqueues
 * until its window ends, whatever became of the job itself. `now` is the store's clock.
 */
function windowField(ctx: PageContext, job: JobRecord, now: Date): SafeHtml | '' {
  const { window } = job;
  if (window === null) return '';
  const key = html`<code>${window.key}</code>`;
  if (window.kind === 'debounce') {
    return field('Debounce', html`key ${key}, latest run ${timeCell(window.endsAt, ctx.now)}${takesDebounce(job) ? '' : '; it takes no more enqueues of its key'}`);
  }
  // Open or not by the store's clock, which the store decides by.
  const open = window.endsAt.getTime() > now.getTime();
  return field('Throttle', html`key ${key}, ${open ? 'drops enqueues until' : 'dropped enqueues until'} ${timeCell(window.endsAt, ctx.now)}`);
}

/**
 * The sequence the job joined at enqueue, or nothing: its key, its afterFailure, and the job it
 * runs after (its sequence edge among the parents read, none for the first job of a sequence or
 * once retention deleted the one before it). A failed job that holds the next one back says so.
 */
function sequenceField(ctx: PageContext, job: JobRecord, edges: JobEdges | null): SafeHtml | '' {
  const { sequence } = job;
  if (sequence === null) return '';
  const before = edges?.parents.find((edge) => edge.sequence !== null);
  const after = before
    ? html`runs after <a href="${href(ctx.base, ['jobs', before.id])}">${before.name}</a> ${stateBadge(before.state)}`
    : edges?.parentsTruncated
      ? 'runs after one of its parents, beyond those this page reads'
      : 'no job before it is stored';
  const failure = sequence.afterFailure === 'block' ? 'if the job before it fails for good, it waits for an operator' : 'if the job before it fails for good, it runs anyway';
  const held = isDeadLetterState(job.state) ? edges?.dependants.find((edge) => edge.sequence === 'block' && !edge.settled) : undefined;
  const holds = held ? html`. Its failure holds back the next job, <a href="${href(ctx.base, ['jobs', held.id])}">${held.name}</a> ${stateBadge(held.state)}, until it is replayed and succeeds or is cancelled` : '';
  return field('Sequence', html`key <code>${sequence.key}</code>, ${after}; afterFailure <code>${sequence.afterFailure}</code>: ${failure}${holds}`);
}

/**
 * The batch the job is part of, or nothing: the batch, linked, and whether the job is one of its
 * jobs or which of its callbacks, and when that callback runs.
 */
function batchField(ctx: PageContext, job: JobRecord): SafeHtml | '' {
  const { batch } = job;
  if (batch === null) return '';
  const link = html`<a class="id" href="${href(ctx.base, ['batches', batch.id])}">${batch.id}</a>`;
  if (batch.callback === null) return field('Batch', html`${link}, one of its jobs`);
  return field('Batch', html`${link}, its <code>${CALLBACK_OPTION[batch.callback]}</code> callback: it ${CALLBACK_RULE[batch.callback]}`);
}

/** One job: its fields, lease, timeline, last reported progress, output, last error, payload (hidden by default) and actions. */
export function jobPage(ctx: PageContext, detail: JobDetail): SafeHtml {
  const { job } = detail;
  const actions = ctx.readOnly ? [] : jobActions(job, detail.now);
  const whole = (part: JobTextPart) => href(ctx.base, ['jobs', job.id, part]);
  const payload = detail.payloadShown
    ? html`${clippedPre('payload', prettyJson(job.payload), whole('payload'))}<p><a href="${href(ctx.base, ['jobs', job.id])}">Hide the payload</a></p>`
    : detail.payloadRevealable
      ? html`<p>The payload is hidden. <a href="${href(ctx.base, ['jobs', job.id], { reveal: 'payload' })}">Reveal it</a></p>`
      : html`<p>The payload is hidden, and this read-only dashboard does not reveal payloads.</p>`;
  const body = html`<section id="job" data-live>
<dl class="fields">
${field('Id', html`<code>${job.id}</code>`)}
${field('Name', job.name)}
${field('Queue', html`<a href="${href(ctx.base, ['jobs'], { queue: job.queue })}">${job.queue}</a>`)}
${field('State', html`${stateBadge(job.state)}${job.cancelRequested ? html` <span class="badge">cancel requested</span>` : ''}`)}
${field('Attempt', `${job.attempt} of ${job.maxAttempts}`)}
${job.snoozes > 0 ? field('Snoozes', `${job.snoozes} (each added one attempt)`) : ''}
${field('Priority', job.priority === 0 ? '0 (default)' : String(job.priority))}
${field('Run at', timeCell(job.runAt, ctx.now))}
${field('Lease', job.workerId ? html`${job.workerId}${job.state === 'running' ? html`, until ${timeCell(job.leasedUntil, ctx.now)}` : ' (last holder)'}` : '—')}
${job.group === null ? '' : field('Group', job.group)}
${job.concurrencyKey === null ? '' : field('Concurrency key', job.concurrencyKey)}
${job.uniqueKey === null ? '' : field('Unique key', job.uniqueKey)}
${windowField(ctx, job, detail.now)}
${sequenceField(ctx, job, detail.edges)}
${batchField(ctx, job)}
${job.scheduleId === null ? '' : field('Schedule', html`<a href="${href(ctx.base, ['schedules', job.scheduleId])}">${job.scheduleId}</a>, for ${formatTime(job.scheduledFor)}`)}
${job.pendingParents > 0 ? field('Open parents', job.pendingParents) : ''}
${field('Enqueued', timeCell(job.createdAt, ctx.now))}
${field('Finished', timeCell(job.finishedAt, ctx.now))}
</dl>
${waitReasonsSection(ctx, detail.reasons)}
${actions.length ? html`<p class="actions">${actions.map((action) => html`<a class="action" href="${href(ctx.base, ['jobs', job.id, action])}">${ACTION_LABELS[action]}</a> `)}</p>` : ''}
<h2>Progress</h2>
${job.progress === null || job.progress === undefined ? html`<p>None reported.</p>` : clippedPre('progress', prettyJson(job.progress), whole('progress'))}
<h2>Last error</h2>
${job.lastError === null ? html`<p>None.</p>` : clippedPre('error', job.lastError, whole('error'))}
<h2>Output</h2>
${job.output === null || job.output === undefined ? html`<p>None.</p>` : clippedPre('output', prettyJson(job.output), whole('output'))}
${edgesSection(ctx, detail.edges)}
${timelineSection(ctx, job.id, detail.history)}
</section>
<h2>Payload</h2>
${payload}`;
  return layout(ctx, 'jobs', `Job ${job.name}`, body);
}
