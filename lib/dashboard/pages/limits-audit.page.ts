import type { AuditRecord, ConcurrencyLimit, LimitHolders, LimitTarget, RateLimit, RateLimitStatus } from '../../store/index.js';
import { html, href, type SafeHtml } from '../html/html.js';
import { layout, timeCell, type PageContext } from '../html/layout.js';
import { prettyJson } from './job.page.js';
import { moreRowsNote, type RowsShown } from './more-rows.view.js';
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

/** What the limits page shows: a page of each kind of limit, and where the next pages start. */
export interface LimitsData {
  readonly limits: readonly LimitUse[];
  readonly rates: readonly RateUse[];
  /** The page's own address parameters, kept by each table's pager for the other table. */
  readonly query: URLSearchParams;
  /** The last concurrency limit shown when more follow, or null. */
  readonly limitsNext: LimitTarget | null;
  /** The last rate limit shown when more follow, or null. */
  readonly ratesNext: LimitTarget | null;
}

/** A limit as a pager's cursor: `queue:<name>` or `key:<key>`. */
function cursorOf(target: LimitTarget): string {
  return 'queue' in target ? `queue:${target.queue}` : `key:${target.key}`;
}

/** Links to the first and the next page of one table, keeping the other table's page. */
function pager(ctx: PageContext, query: URLSearchParams, param: 'after' | 'rates_after', next: LimitTarget | null, what: string): SafeHtml | '' {
  const other = param === 'after' ? 'rates_after' : 'after';
  const keep = { [other]: query.get(other) ?? undefined };
  if (!query.get(param) && !next) return '';
  return html`<nav class="pager">${query.get(param) ? html`<a href="${href(ctx.base, ['limits'], keep)}">First ${what}</a>` : ''}
${next ? html`<a rel="next" href="${href(ctx.base, ['limits'], { ...keep, [param]: cursorOf(next) })}">Next ${what}</a>` : ''}</nav>`;
}

/** Each rate limit, queue-wide or per key: its rate, the starts its window counts now, and until when it is full. */
function rateLimitsTable(ctx: PageContext, data: LimitsData): SafeHtml {
  const { rates } = data;
  const rows = rates.map(
    ({ limit, status }) => html`<tr><td>${'queue' in limit ? 'queue' : 'key'}</td><td>${'queue' in limit ? html`<a href="${href(ctx.base, ['queues', limit.queue])}">${limit.queue}</a>` : limit.key}</td>
<td>${rateText(limit)}</td><td class="num">${status ? `${status.startsInWindow} / ${status.max}` : '—'}</td><td>${status?.fullUntil ? timeCell(status.fullUntil, ctx.now) : 'not full'}</td></tr>`,
  );
  return html`<h2>Rate limits</h2><div class="scroll"><table id="rate-limits" data-live><thead><tr><th>Kind</th><th>Target</th><th>Rate</th><th class="num">Starts in window / max</th><th>Full until</th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="5">${data.query.get('rates_after') ? 'No rate limit comes after these.' : 'No rate limits are set.'}</td></tr>`}</tbody></table></div>
${pager(ctx, data.query, 'rates_after', data.ratesNext, 'rate limits')}`;
}

/**
 * Each concurrency limit, queue-wide or per key: slots used against the maximum, and who holds
 * them; then each rate limit with its window.
 */
export function limitsPage(ctx: PageContext, data: LimitsData): SafeHtml {
  const rows = data.limits.map(({ limit, use }) => {
    const used = use.holders.length;
    return html`<tr><td>${'queue' in limit ? 'queue' : 'key'}</td><td>${'queue' in limit ? html`<a href="${href(ctx.base, ['queues', limit.queue])}">${limit.queue}</a>` : limit.key}</td>
<td class="num">${used}${use.truncated ? '+' : ''} / ${limit.max}</td>
<td>${used ? html`<ul class="holders">${use.holders.map((holder) => html`<li><a href="${href(ctx.base, ['jobs', holder.jobId])}">${holder.name}</a> on ${holder.workerId}, until ${timeCell(holder.leasedUntil, ctx.now)}</li>`)}${use.truncated ? html`<li>and more</li>` : ''}</ul>` : '—'}</td></tr>`;
  });
  const body = html`<p>Limits in key order (per key first, then per queue), 100 of each at a time.</p>
<h2>Concurrency limits</h2><div class="scroll"><table id="limits" data-live><thead><tr><th>Kind</th><th>Target</th><th class="num">Used / max</th><th>Held by</th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="4">${data.query.get('after') ? 'No concurrency limit comes after these.' : 'No concurrency limits are set.'}</td></tr>`}</tbody></table></div>
${pager(ctx, data.query, 'after', data.limitsNext, 'concurrency limits')}
${rateLimitsTable(ctx, data)}`;
  return layout(ctx, 'limits', 'Limits', body);
}

/** The most recent operator actions, from the dashboard, the CLI or the client. */
export function auditPage(ctx: PageContext, records: readonly AuditRecord[], shown: RowsShown): SafeHtml {
  const rows = records.map(
    (record) => html`<tr><td>${timeCell(record.at, ctx.now)}</td><td>${record.actor}</td><td><code>${record.action}</code></td><td>${record.target}</td><td><code>${record.detail === null || record.detail === undefined ? '' : prettyJson(record.detail, 0)}</code></td></tr>`,
  );
  const body = html`<div class="scroll"><table id="audit" data-live><thead><tr><th>At</th><th>Actor</th><th>Action</th><th>Target</th><th>Detail</th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="5">No operator action yet.</td></tr>`}</tbody></table></div>
${moreRowsNote(ctx, 'audit', records.length, shown, 'operator actions, newest first')}`;
  return layout(ctx, 'audit', 'Audit log', body);
}
