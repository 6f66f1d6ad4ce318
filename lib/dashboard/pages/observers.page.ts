import type { ObserverStatus } from '../../store/index.js';
import { html, type SafeHtml } from '../html/html.js';
import { layout, timeCell, type PageContext } from '../html/layout.js';
import { errorPreview } from './jobs.page.js';
import { moreRowsNote, type RowsShown } from './more-rows.view.js';

/** Each transition observer: where its cursor is, how far behind the log, who delivers for it, and its failures. */
export function observersPage(ctx: PageContext, observers: readonly ObserverStatus[], shown: RowsShown): SafeHtml {
  const rows = observers.map(
    (observer) => html`<tr>
<td><code>${observer.observer}</code></td>
<td class="num">${observer.lagEntries}${observer.lagCapped ? '+' : ''}</td>
<td>${observer.oldestUndeliveredAt ? timeCell(observer.oldestUndeliveredAt, ctx.now) : 'caught up'}</td>
<td>${observer.leasedBy ? html`${observer.leasedBy}, until ${timeCell(observer.leasedUntil, ctx.now)}` : '—'}</td>
<td class="num">${observer.failures}</td>
<td>${observer.failures > 0 && observer.retryAt ? timeCell(observer.retryAt, ctx.now) : '—'}</td>
<td class="error">${errorPreview(observer.lastError)}</td>
<td>${timeCell(observer.updatedAt, ctx.now)}</td>
</tr>`,
  );
  const body = html`<p>Observers receive every transition of the jobs they watch, at least once and in order per job. The lag counts the log entries after an observer's cursor (up to 10,000), whatever its filters match.</p>
<div class="scroll"><table id="observers" data-live>
<thead><tr><th>Observer</th><th class="num">Lag (entries)</th><th>Oldest undelivered</th><th>Delivering</th><th class="num">Failures</th><th>Retry at</th><th>Last error</th><th>Cursor moved</th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="8">No observer has started; an @OnJobTransition method creates its cursor when its app first runs.</td></tr>`}</tbody>
</table></div>
${moreRowsNote(ctx, 'observers', observers.length, shown, 'observers, by id')}`;
  return layout(ctx, 'observers', 'Observers', body);
}
