import type { EdgeJob, JobEdges, LimitHolder } from '../../store/index.js';
import { html, href, type SafeHtml } from '../html/html.js';
import { stateBadge, timeCell, type PageContext } from '../html/layout.js';
import type { WaitReason } from '../why/wait-reasons.js';
import { errorPreview } from './jobs.page.js';
import { rateText } from './rate-limit.view.js';
import { CALLBACK_OPTION } from './batches.page.js';

function holderList(ctx: PageContext, holders: readonly LimitHolder[], truncated: boolean): SafeHtml {
  return html`<ul>${holders.map((holder) => html`<li><a href="${href(ctx.base, ['jobs', holder.jobId])}">${holder.name}</a> on ${holder.workerId}, lease until ${timeCell(holder.leasedUntil, ctx.now)}</li>`)}${truncated ? html`<li>and more</li>` : ''}</ul>`;
}

function reasonItem(ctx: PageContext, reason: WaitReason): SafeHtml {
  switch (reason.kind) {
    case 'queue_paused':
      return html`<li>Its queue <strong>${reason.queue}</strong> is paused: no worker claims its jobs until it is resumed.${ctx.readOnly ? '' : html` <a class="action" href="${href(ctx.base, ['queues', reason.queue, 'resume'])}">Resume</a>`}</li>`;
    case 'limit_full': {
      const what = 'queue' in reason.target ? html`queue <strong>${reason.target.queue}</strong>` : html`key <strong>${reason.target.key}</strong>`;
      return html`<li>The concurrency limit of ${what} is full: ${reason.holders.length}${reason.truncated ? '+' : ''} of ${reason.max} slots are held by${holderList(ctx, reason.holders, reason.truncated)}</li>`;
    }
    case 'rate_limited': {
      const what = 'queue' in reason.target ? html`queue <strong>${reason.target.queue}</strong>` : html`key <strong>${reason.target.key}</strong>`;
      return html`<li>The rate limit of ${what} is reached until ${timeCell(reason.fullUntil, ctx.now)}: it allows ${rateText(reason)}, all used, so claims pass its jobs over until then.</li>`;
    }
    case 'awaiting_parents':
      return html`<li>It awaits its parents: ${reason.pending} of ${reason.total ?? 'its'} ${reason.total === 1 ? 'parent is' : 'parents are'} still open${reason.open.length ? html`:<ul>${reason.open.map((edge) => html`<li><a href="${href(ctx.base, ['jobs', edge.id])}">${edge.name}</a> ${stateBadge(edge.state)}</li>`)}</ul>` : '.'}</li>`;
    case 'sequence':
      return sequenceItem(ctx, reason);
    case 'batch_callback':
      return batchCallbackItem(ctx, reason);
    case 'parents_succeeded':
      return reason.batch === null
        ? html`<li>It will not run: it waits <code>on_failure</code>, so it runs only when one of its parents does not succeed, and every one of them succeeded, so it was cancelled.</li>`
        : html`<li>It will not run: it is the <code>onFailure</code> callback of batch ${batchLink(ctx, reason.batch.id)}, which runs only when one of the batch's jobs does not succeed, and every one of them succeeded, so it was cancelled.</li>`;
    case 'not_due':
      return html`<li>Its run time is in the future: ${timeCell(reason.runAt, ctx.now)}.</li>`;
    case 'debounced':
      // At its latest run time no enqueue can move it later; each still replaces its payload.
      return reason.runAt.getTime() >= reason.endsAt.getTime()
        ? html`<li>It is debounced and has reached its latest run time: it runs at ${timeCell(reason.runAt, ctx.now)}. Another enqueue with key <strong>${reason.key}</strong> replaces its payload but cannot push it later.</li>`
        : html`<li>It is debounced: it runs at ${timeCell(reason.runAt, ctx.now)} unless another enqueue with key <strong>${reason.key}</strong> pushes it later, and no later than ${timeCell(reason.endsAt, ctx.now)}.</li>`;
    case 'retry_wait':
      return html`<li>It waits for a retry until ${timeCell(reason.runAt, ctx.now)}: attempt ${reason.failedAttempt} failed${reason.lastError ? html` with <span class="error">${errorPreview(reason.lastError)}</span>` : ''}.</li>`;
    case 'snoozed':
      return html`<li>Its handler snoozed attempt ${reason.attempt}: it runs again at ${timeCell(reason.runAt, ctx.now)}. A snooze spends no attempt; this job has snoozed ${reason.snoozes} ${reason.snoozes === 1 ? 'time' : 'times'}.</li>`;
    case 'no_worker':
      return html`<li>No running worker serves its queue <strong>${reason.queue}</strong>: none has reported in with that queue lately. <a href="${href(ctx.base, ['workers'])}">Workers</a></li>`;
    case 'leased':
      return reason.lapsed
        ? html`<li>Worker <strong>${reason.workerId}</strong> held its lease until ${timeCell(reason.leasedUntil, ctx.now)}, and it lapsed: the next claim or sweep takes the job back.</li>`
        : html`<li>Worker <strong>${reason.workerId}</strong> runs it and holds its lease until ${timeCell(reason.leasedUntil, ctx.now)}.</li>`;
    case 'ready':
      return html`<li>It is due and nothing holds it back: the next claim by a worker serving queue <strong>${reason.queue}</strong> takes it. If it stays here, every such worker is busy.</li>`;
  }
}

/** A batch, linked to its page. */
function batchLink(ctx: PageContext, batchId: string): SafeHtml {
  return html`<a class="id" href="${href(ctx.base, ['batches', batchId])}">${batchId}</a>`;
}

/** What runs a batch's callback once the batch's jobs have ended, by its kind. */
function callbackRunsWhen(reason: Extract<WaitReason, { kind: 'batch_callback' }>): string {
  switch (reason.callback) {
    case 'success':
      return 'It runs once every one of them succeeded, and is cancelled as soon as one fails for good or is cancelled.';
    case 'complete':
      return 'It runs once every one of them ended, however each ended.';
    case 'failure':
      return `It runs once every one of them ended if at least one did not succeed (${reason.unsucceeded} so far), and is cancelled if all succeed.`;
  }
}

/** A batch's callback waits for the batch's jobs to end. */
function batchCallbackItem(ctx: PageContext, reason: Extract<WaitReason, { kind: 'batch_callback' }>): SafeHtml {
  return html`<li>It is the <code>${CALLBACK_OPTION[reason.callback]}</code> callback of batch ${batchLink(ctx, reason.batchId)}: it waits for the batch's jobs to end, ${reason.pending} of ${reason.total} still pending. ${callbackRunsWhen(reason)}</li>`;
}

/** A job of a sequence, linked, with its state. */
function jobLink(ctx: PageContext, edge: EdgeJob): SafeHtml {
  return html`<a href="${href(ctx.base, ['jobs', edge.id])}">${edge.name}</a> ${stateBadge(edge.state)}`;
}

/** Its turn in its sequence: behind a job that has not ended, held by one that failed for good, or behind one cancelled in line. */
function sequenceItem(ctx: PageContext, reason: Extract<WaitReason, { kind: 'sequence' }>): SafeHtml {
  const key = html`<strong>${reason.key}</strong>`;
  const before = jobLink(ctx, reason.before);
  switch (reason.held) {
    case 'behind':
      return html`<li>It waits behind job ${before} of sequence ${key}: the jobs of a sequence run one at a time, in enqueue order, and this one runs after that job.</li>`;
    case 'blocked': {
      const actions = ctx.readOnly
        ? ''
        : html` <a class="action" href="${href(ctx.base, ['jobs', reason.before.id, 'replay'])}">Replay it</a> <a class="action" href="${href(ctx.base, ['jobs', reason.before.id, 'cancel'])}">Cancel it</a>`;
      return html`<li>Sequence ${key} is blocked by the failure of job ${before}, the one before this job: its afterFailure is block, so it waits for an operator. Replaying that job releases this one once it succeeds; cancelling (discarding) it releases this one at once.${actions}</li>`;
    }
    case 'in_line':
      return html`<li>It waits behind job ${before} of sequence ${key}, which ended before its turn came and keeps its place in line: this job's turn comes when the jobs before that one have had theirs.</li>`;
  }
}

/** The "why is this job not running?" section, or nothing for a finished job. */
export function waitReasonsSection(ctx: PageContext, reasons: readonly WaitReason[] | null): SafeHtml | '' {
  if (!reasons || reasons.length === 0) return '';
  const running = reasons.length === 1 && reasons[0]!.kind === 'leased';
  return html`<section class="why" id="why" data-live><h2>${running ? 'Who runs this job' : 'Why is this job not running?'}</h2><ul class="reasons">${reasons.map((reason) => reasonItem(ctx, reason))}</ul></section>`;
}

/** Parents and dependants with their states and links. */
export function edgesSection(ctx: PageContext, edges: JobEdges | null): SafeHtml | '' {
  if (!edges || (edges.parents.length === 0 && edges.dependants.length === 0)) return '';
  const side = (title: string, list: JobEdges['parents'], truncated: boolean) =>
    list.length === 0
      ? ''
      : html`<h3>${title}</h3><ul class="edges">${list.map((edge) => html`<li><a href="${href(ctx.base, ['jobs', edge.id])}">${edge.name}</a> ${stateBadge(edge.state)} <small>${edge.settled ? (edge.satisfied ? 'released its share' : 'cancelled the dependant') : 'open'}${edge.sequence === null ? '' : ', sequence order'}</small></li>`)}${truncated ? html`<li>and more</li>` : ''}</ul>`;
  return html`<section class="edges"><h2>Dependencies</h2>${side('Parents', edges.parents, edges.parentsTruncated)}${side('Dependants', edges.dependants, edges.dependantsTruncated)}</section>`;
}
