import { JOB_STATES, visibleText, type JobRecord } from '../../core/index.js';
import type { JobPage } from '../../store/index.js';
import { html, href, type SafeHtml } from '../html/html.js';
import { csrfField, layout, stateBadge, timeCell, type PageContext } from '../html/layout.js';

/** The filters of the jobs page, as read from its query string. */
export interface JobFilters {
  readonly state?: string;
  readonly queue?: string;
  readonly name?: string;
  /** The start of a job id. */
  readonly id?: string;
  /** Enqueued at or after, as the form's `YYYY-MM-DDTHH:MM` in UTC. */
  readonly from?: string;
  /** Enqueued before, likewise. */
  readonly to?: string;
  readonly order?: 'newest' | 'oldest';
  /** The page cursor: `before` for newest first, `after` for oldest first. */
  readonly cursor?: string;
}

/** A short, single-line preview of a job's last error for a table cell. */
export function errorPreview(error: string | null): string {
  if (!error) return '';
  // visibleText cuts at a whole character, never inside a surrogate pair or an escape it wrote.
  return visibleText(error.split('\n', 1)[0]!, { maxLength: 120 });
}

/** A job the jobs page offers to cancel in bulk: one that waits, or runs without a cancel request yet. */
export function isBulkCancellable(job: JobRecord): boolean {
  return job.state === 'scheduled' || job.state === 'awaiting_parents' || (job.state === 'running' && !job.cancelRequested);
}

/** One table row per job; shared by the jobs and dead-letter pages. */
export function jobRow(ctx: PageContext, job: JobRecord, lead: SafeHtml | '' = '', tail: SafeHtml | '' = ''): SafeHtml {
  return html`<tr>
${lead}
<td><a class="id" href="${href(ctx.base, ['jobs', job.id])}">${job.id}</a></td>
<td>${job.name}</td>
<td>${job.queue}</td>
<td>${stateBadge(job.state)}</td>
<td class="num">${job.attempt}/${job.maxAttempts}</td>
<td>${job.state === 'scheduled' ? timeCell(job.runAt, ctx.now) : '—'}</td>
<td class="error">${errorPreview(job.lastError)}</td>
<td>${job.workerId ?? '—'}</td>
${tail}
</tr>`;
}

/** The column heads matching {@link jobRow}. */
export const JOB_HEADS = html`<th>Id</th><th>Name</th><th>Queue</th><th>State</th><th class="num">Attempt</th><th>Next run</th><th>Last error</th><th>Worker</th>`;

/** The filter form and one keyset page of jobs, newest first. */
export function jobsPage(ctx: PageContext, filters: JobFilters, page: JobPage): SafeHtml {
  const { cursor, ...kept } = filters;
  const oldest = filters.order === 'oldest';
  const form = html`<form class="filters" method="get" action="${href(ctx.base, ['jobs'])}">
<label>State <select name="state"><option value="">any</option>${JOB_STATES.map((state) => html`<option value="${state}"${filters.state === state ? html` selected` : ''}>${state.replace(/_/g, ' ')}</option>`)}</select></label>
<label>Queue <input name="queue" value="${filters.queue ?? ''}" size="12"></label>
<label>Name <input name="name" value="${filters.name ?? ''}" size="16"></label>
<label>Id starts with <input name="id" value="${filters.id ?? ''}" size="10"></label>
<label>Enqueued from (UTC) <input type="datetime-local" name="from" value="${filters.from ?? ''}"></label>
<label>to <input type="datetime-local" name="to" value="${filters.to ?? ''}"></label>
${oldest ? html`<input type="hidden" name="order" value="oldest">` : ''}
<button type="submit">Filter</button>
<a href="${href(ctx.base, ['jobs'])}">Clear</a>
</form>`;
  // Ticking rows and pressing "Cancel selected" POSTs their ids to a question listing them.
  const selectable = !ctx.readOnly && page.jobs.some(isBulkCancellable);
  const select = (job: JobRecord) =>
    !selectable ? '' : isBulkCancellable(job) ? html`<td><input type="checkbox" name="id" value="${job.id}" aria-label="select ${job.id}"></td>` : html`<td></td>`;
  const rows = page.jobs.map((job) => jobRow(ctx, job, select(job), html`<td>${timeCell(job.createdAt, ctx.now)}</td>`));
  const further = oldest ? 'newer' : 'older';
  const pager = html`<nav class="pager">
${cursor ? html`<a href="${href(ctx.base, ['jobs'], kept)}">${oldest ? 'Oldest' : 'Newest'}</a>` : ''}
${page.next ? html`<a rel="next" href="${href(ctx.base, ['jobs'], { ...kept, [oldest ? 'after' : 'before']: page.next })}">${oldest ? 'Newer' : 'Older'}</a>` : html`<span>No ${further} jobs.</span>`}
</nav>`;
  const { order: _order, ...unordered } = kept;
  const heads = html`${selectable ? html`<th></th>` : ''}<th>Id</th><th>Name</th><th>Queue</th><th>State</th><th class="num">Attempt</th><th>Next run</th><th>Last error</th><th>Worker</th><th><a href="${href(ctx.base, ['jobs'], oldest ? unordered : { ...unordered, order: 'oldest' })}">Enqueued ${oldest ? '↑' : '↓'}</a></th>`;
  // The button refreshes with the rows it acts on; the form and its token stay put around them.
  const list = html`<section id="job-list"${cursor ? '' : html` data-live`}>
${selectable ? html`<p class="actions"><button type="submit">Cancel selected</button></p>` : ''}
<div class="scroll"><table id="jobs">
<thead><tr>${heads}</tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="9">No job matches${page.next ? ` on this page; look at ${further} jobs` : ''}.</td></tr>`}</tbody>
</table></div>
</section>`;
  const body = html`${form}
${ctx.readOnly ? list : html`<form method="post" action="${href(ctx.base, ['jobs', 'cancel'])}">${csrfField(ctx)}${list}</form>`}
${pager}`;
  return layout(ctx, 'jobs', 'Jobs', body);
}
