import type { BatchCallbackKind } from '../../core/index.js';
import { OPEN_STATES } from '../../store/batch/batch-summary.js';
import type { BatchCallbackJob, BatchSummary } from '../../store/index.js';
import { html, href, type SafeHtml } from '../html/html.js';
import { layout, stateBadge, timeCell, type PageContext } from '../html/layout.js';

/** How many batches the batches page shows at once: each is one aggregate read of the store. */
export const BATCHES_PER_PAGE = 50;

/** How many failed job ids a batch's page lists, and how many when asked for more. */
export const FAILED_SHOWN = 200;
export const MORE_FAILED_SHOWN = 1_000;

/** A callback as the enqueue call names it: `onSuccess`, `onComplete`, `onFailure`. */
export const CALLBACK_OPTION: Readonly<Record<BatchCallbackKind, string>> = { success: 'onSuccess', complete: 'onComplete', failure: 'onFailure' };

/** When each callback runs, and when it is cancelled instead. */
export const CALLBACK_RULE: Readonly<Record<BatchCallbackKind, string>> = {
  success: 'runs once every job of the batch succeeded, and is cancelled as soon as one fails for good or is cancelled',
  complete: 'runs once every job of the batch ended, however each ended',
  failure: 'runs once every job of the batch ended and at least one did not succeed, and is cancelled when all succeeded',
};

/** The callbacks of a batch that have not ended: a cancel of the batch cancels them, so none runs. */
export function openCallbacks(batch: BatchSummary): BatchCallbackJob[] {
  return batch.callbacks.filter((callback) => OPEN_STATES.includes(callback.state));
}

/** True while a cancel of the batch has something to cancel: a pending job, or a callback that has not ended. */
export function batchCancellable(batch: BatchSummary): boolean {
  return batch.pending > 0 || openCallbacks(batch).length > 0;
}

/** One page of batches, newest first, and where the pages around it start. */
export interface BatchPage {
  readonly batches: readonly BatchSummary[];
  /** The batch id this page starts before, or null for the first page. */
  readonly before: string | null;
  /** The `before` of the next (older) page, or null when none follows. */
  readonly next: string | null;
}

/** A callback, linked to its job, with its state. */
function callbackLink(ctx: PageContext, callback: BatchCallbackJob): SafeHtml {
  return html`<a href="${href(ctx.base, ['jobs', callback.jobId])}">${CALLBACK_OPTION[callback.kind]}</a> ${stateBadge(callback.state)}`;
}

/** How far a batch has come: ended, or how many of its jobs are still pending. */
function progressText(batch: BatchSummary): string {
  return batch.ended ? 'ended' : `${batch.pending} of ${batch.total} pending`;
}

function batchRow(ctx: PageContext, batch: BatchSummary): SafeHtml {
  return html`<tr>
<td><a class="id" href="${href(ctx.base, ['batches', batch.id])}">${batch.id}</a></td>
<td>${timeCell(batch.createdAt, ctx.now)}</td>
<td>${progressText(batch)}</td>
<td class="num">${batch.total}</td>
<td class="num">${batch.pending}</td>
<td class="num">${batch.succeeded}</td>
<td class="num">${batch.failed}</td>
<td class="num">${batch.cancelled}</td>
<td>${batch.callbacks.map((callback, i) => html`${i > 0 ? ' ' : ''}${callbackLink(ctx, callback)}`)}</td>
</tr>`;
}

/**
 * Batches, newest first, {@link BATCHES_PER_PAGE} at a time: each with its progress (its jobs by
 * how they stand, counted when read) and its callbacks with their states. "Older batches" carries
 * the last batch's id as `before`.
 */
export function batchesPage(ctx: PageContext, page: BatchPage): SafeHtml {
  const rows = page.batches.map((batch) => batchRow(ctx, batch));
  const pager = html`<nav class="pager">${page.before === null ? '' : html`<a href="${href(ctx.base, ['batches'])}">Newest batches</a>`}
${page.next === null ? '' : html`<a rel="next" href="${href(ctx.base, ['batches'], { before: page.next })}">Older batches</a>`}</nav>`;
  const body = html`<p>Batches written with <code>enqueueBatch</code>, newest first, ${BATCHES_PER_PAGE} at a time. Each counts its jobs as the store holds them now (a job retention deleted is not counted); failed means dead-lettered or quarantined. Its callbacks run when its jobs have ended: <code>onSuccess</code> when all succeeded, <code>onComplete</code> whatever became of them, <code>onFailure</code> when at least one did not succeed.</p>
<div class="scroll"><table id="batches">
<thead><tr><th>Batch</th><th>Written</th><th>Progress</th><th class="num">Jobs</th><th class="num">Pending</th><th class="num">Succeeded</th><th class="num">Failed</th><th class="num">Cancelled</th><th>Callbacks</th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="9">${page.before === null ? 'No batch is stored.' : 'No batch is older than this one.'}</td></tr>`}</tbody>
</table></div>
${pager}`;
  return layout(ctx, 'batches', 'Batches', body);
}

/** What a batch's page shows: the batch, and how many failed ids it read. */
export interface BatchDetail {
  readonly batch: BatchSummary;
  /** The most failed ids the read asked for. */
  readonly failedShown: number;
}

function field(label: string, value: SafeHtml | string | number): SafeHtml {
  return html`<dt>${label}</dt><dd>${value}</dd>`;
}

/** The failed jobs' ids, linked, and a note when more failed than the page lists. */
function failedSection(ctx: PageContext, { batch, failedShown }: BatchDetail): SafeHtml {
  if (batch.failed === 0) return html`<h2>Failed jobs</h2><p>None.</p>`;
  const listed = batch.failedJobIds;
  const more =
    batch.failed > listed.length
      ? html`<p class="more">These are the first ${listed.length.toLocaleString('en-US')} of ${batch.failed.toLocaleString('en-US')} failed jobs, by id.${
          failedShown < MORE_FAILED_SHOWN ? html` <a href="${href(ctx.base, ['batches', batch.id], { more: 1 })}">Show up to 1,000</a>` : ' The page shows no more.'
        }</p>`
      : '';
  return html`<h2>Failed jobs</h2>
<p>Dead-lettered or quarantined; replay or discard each from its page.</p>
<ul class="failed">${listed.map((jobId) => html`<li><a class="id" href="${href(ctx.base, ['jobs', jobId])}">${jobId}</a></li>`)}</ul>
${more}`;
}

/**
 * One batch: its counts, its callbacks (each linked to its job, with its state and when it runs),
 * the ids of its failed jobs (linked), and "Cancel batch" while something of it has not ended.
 */
export function batchPage(ctx: PageContext, detail: BatchDetail): SafeHtml {
  const { batch } = detail;
  const progress = batch.ended ? 'ended: no job of the batch is pending' : `${batch.pending} of ${batch.total} ${batch.total === 1 ? 'job' : 'jobs'} still pending`;
  const cancel = !ctx.readOnly && batchCancellable(batch) ? html`<p class="actions"><a class="action" href="${href(ctx.base, ['batches', batch.id, 'cancel'])}">Cancel batch</a></p>` : '';
  const body = html`<section id="batch" data-live>
<dl class="fields">
${field('Id', html`<code>${batch.id}</code>`)}
${field('Written', timeCell(batch.createdAt, ctx.now))}
${field('Progress', progress)}
${field('Jobs', batch.total)}
${field('Pending', batch.pending)}
${field('Succeeded', batch.succeeded)}
${field('Failed', batch.failed)}
${field('Cancelled', batch.cancelled)}
</dl>
${cancel}
<h2>Callbacks</h2>
<ul class="callbacks">${batch.callbacks.map((callback) => html`<li>${callbackLink(ctx, callback)}: ${CALLBACK_RULE[callback.kind]}.</li>`)}</ul>
${failedSection(ctx, detail)}
<p><small>Counted from the jobs the store holds now: a job retention deleted is not counted. A failed job replayed is pending again, but the callbacks that already ran or were cancelled do not run again.</small></p>
</section>`;
  return layout(ctx, 'batches', `Batch ${batch.id}`, body);
}
