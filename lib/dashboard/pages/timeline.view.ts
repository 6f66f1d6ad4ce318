import type { HistoryEntry } from '../../store/index.js';
import { clipText } from '../html/clipped-text.js';
import { html, href, type SafeHtml } from '../html/html.js';
import { stateBadge, timeCell, type PageContext } from '../html/layout.js';
import { errorPreview } from './jobs.page.js';

/** How many history entries a job's page shows at once. */
export const TIMELINE_PAGE = 50;
/** How much of one entry's error its expanded row shows; the whole error is a page of its own. */
export const TIMELINE_ERROR_SHOWN = 2_048;

/** One page of a job's history, oldest first, and where its neighbours start. */
export interface TimelinePage {
  readonly entries: readonly HistoryEntry[];
  /** The id to read earlier entries before, or null when this page starts at the first entry kept. */
  readonly earlierBefore: number | null;
  /** True when this is not the newest page, so a link leads back to it. */
  readonly older: boolean;
}

/**
 * An entry's error: its first line, and when there is more (a stack trace), the rest behind a
 * `<details>` the operator opens, cut at {@link TIMELINE_ERROR_SHOWN} with a link to the whole.
 */
function entryError(ctx: PageContext, jobId: string, entry: HistoryEntry): SafeHtml | '' {
  if (entry.error === null) return '';
  const first = errorPreview(entry.error);
  const single = !entry.error.includes('\n') && first === entry.error;
  if (single) return html`${first}`;
  const { text, cut } = clipText(entry.error, TIMELINE_ERROR_SHOWN);
  return html`<details><summary>${first}</summary><pre class="error">${text}</pre>${cut ? html`<p class="cut"><a href="${href(ctx.base, ['jobs', jobId, 'history', String(entry.id)])}">Show the whole error</a></p>` : ''}</details>`;
}

/** The timeline: a page of transitions with their time, attempt and error, and links to the pages beside it. */
export function timelineSection(ctx: PageContext, jobId: string, page: TimelinePage): SafeHtml {
  const rows = page.entries.map(
    (entry) => html`<tr><td>${timeCell(entry.at, ctx.now)}</td><td>${stateBadge(entry.state)}</td><td class="num">${entry.attempt}</td><td class="error">${entryError(ctx, jobId, entry)}</td></tr>`,
  );
  const pager =
    page.earlierBefore !== null || page.older
      ? html`<nav class="pager">${page.older ? html`<a href="${href(ctx.base, ['jobs', jobId])}">Newest entries</a>` : ''}
${page.earlierBefore !== null ? html`<a rel="next" href="${href(ctx.base, ['jobs', jobId], { before: page.earlierBefore })}">Earlier entries</a>` : ''}</nav>`
      : '';
  return html`<h2>Timeline</h2>
${page.earlierBefore !== null || page.older ? html`<p>${TIMELINE_PAGE} entries at a time, oldest first.</p>` : ''}
<div class="scroll"><table class="timeline"><thead><tr><th>At</th><th>State</th><th class="num">Attempt</th><th>Error</th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="4">No history is kept for this job${page.older ? ' before these' : ''}.</td></tr>`}</tbody></table></div>
${pager}`;
}
