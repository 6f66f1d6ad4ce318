import type { AuditRecord, ConcurrencyLimit, LimitHolders, RateLimit, RateLimitStatus } from '../../store/index.js';
import { html, href, type SafeHtml } from '../html/html.js';
import { layout, timeCell, type PageContext } from '../html/layout.js';
import { prettyJson } from './job.page.js';
import { rateText } from './rate-limit.view.js';

/** A limit and who holds its slots now. */
export interface LimitUse {
  readonly limit: ConcurrencyLimit;
  readonly use: LimitHolders;
}

/** A rate limit and its window now (null if it was removed between the list and the read). */
export interface RateUse {
  readonly limit: RateLimit;
  readonly status: RateLimitStatus | null;
}

/** Each rate limit, queue-wide or per key: its rate, the starts its window counts now, and until when it is full. */
function rateLimitsTable(ctx: PageContext, rates: readonly RateUse[], more: number): SafeHtml {
  const rows = rates.map(
    ({ limit, status }) => html`<tr><td>${'queue' in limit ? 'queue' : 'key'}</td><td>${'queue' in limit ? html`<a href="${href(ctx.base, ['queues', limit.queue])}">${limit.queue}</a>` : limit.key}</td>
<td>${rateText(limit)}</td><td class="num">${status ? `${status.startsInWindow} / ${status.max}` : '—'}</td><td>${status?.fullUntil ? timeCell(status.fullUntil, ctx.now) : 'not full'}</td></tr>`,
  );
  return html`<h2>Rate limits</h2><table id="rate-limits" data-live><thead><tr><th>Kind</th><th>Target</th><th>Rate</th><th class="num">Starts in window / max</th><th>Full until</th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="5">No rate limits are set.</td></tr>`}</tbody></table>
${more > 0 ? html`<p>${more} more rate limits are set; this page shows the first ${rates.length}.</p>` : ''}`;
}

/**
 * Each concurrency limit, queue-wide or per key: slots used against the maximum, and who holds
 * them; then each rate limit with its window.
 */
export function limitsPage(ctx: PageContext, limits: readonly LimitUse[], more: number, rates: readonly RateUse[], moreRates: number): SafeHtml {
  const rows = limits.map(({ limit, use }) => {
    const used = use.holders.length;
    return html`<tr><td>${'queue' in limit ? 'queue' : 'key'}</td><td>${'queue' in limit ? html`<a href="${href(ctx.base, ['queues', limit.queue])}">${limit.queue}</a>` : limit.key}</td>
<td class="num">${used}${use.truncated ? '+' : ''} / ${limit.max}</td>
<td>${used ? html`<ul class="holders">${use.holders.map((holder) => html`<li><a href="${href(ctx.base, ['jobs', holder.jobId])}">${holder.name}</a> on ${holder.workerId}, until ${timeCell(holder.leasedUntil, ctx.now)}</li>`)}${use.truncated ? html`<li>and more</li>` : ''}</ul>` : '—'}</td></tr>`;
  });
  const body = html`<h2>Concurrency limits</h2><table id="limits" data-live><thead><tr><th>Kind</th><th>Target</th><th class="num">Used / max</th><th>Held by</th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="4">No concurrency limits are set.</td></tr>`}</tbody></table>
${more > 0 ? html`<p>${more} more limits are set; this page shows the first ${limits.length}.</p>` : ''}
${rateLimitsTable(ctx, rates, moreRates)}`;
  return layout(ctx, 'limits', 'Limits', body);
}

/** The most recent operator actions, from the dashboard, the CLI or the client. */
export function auditPage(ctx: PageContext, records: readonly AuditRecord[]): SafeHtml {
  const rows = records.map(
    (record) => html`<tr><td>${timeCell(record.at, ctx.now)}</td><td>${record.actor}</td><td><code>${record.action}</code></td><td>${record.target}</td><td><code>${record.detail === null || record.detail === undefined ? '' : prettyJson(record.detail, 0)}</code></td></tr>`,
  );
  const body = html`<table id="audit" data-live><thead><tr><th>At</th><th>Actor</th><th>Action</th><th>Target</th><th>Detail</th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="5">No operator action yet.</td></tr>`}</tbody></table>`;
  return layout(ctx, 'audit', 'Audit log', body);
}
