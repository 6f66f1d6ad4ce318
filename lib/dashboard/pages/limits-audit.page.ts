import type { AuditRecord, ConcurrencyLimit } from '../../store/index.js';
import { html, href, type SafeHtml } from '../html/html.js';
import { layout, timeCell, type PageContext } from '../html/layout.js';
import { prettyJson } from './job.page.js';

/** Each concurrency limit, queue-wide or per key, with its maximum. */
export function limitsPage(ctx: PageContext, limits: readonly ConcurrencyLimit[]): SafeHtml {
  const rows = limits.map(
    (limit) => html`<tr><td>${'queue' in limit ? 'queue' : 'key'}</td><td>${'queue' in limit ? html`<a href="${href(ctx.base, ['jobs'], { queue: limit.queue })}">${limit.queue}</a>` : limit.key}</td><td class="num">${limit.max}</td></tr>`,
  );
  const body = html`<table id="limits" data-live><thead><tr><th>Kind</th><th>Target</th><th class="num">Max</th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="3">No concurrency limits are set.</td></tr>`}</tbody></table>`;
  return layout(ctx, 'limits', 'Concurrency limits', body);
}

/** The most recent operator actions, from the dashboard, the CLI or the client. */
export function auditPage(ctx: PageContext, records: readonly AuditRecord[]): SafeHtml {
  const rows = records.map(
    (record) => html`<tr><td>${timeCell(record.at, ctx.now)}</td><td>${record.actor}</td><td><code>${record.action}</code></td><td>${record.target}</td><td><code>${record.detail === null || record.detail === undefined ? '' : prettyJson(record.detail)}</code></td></tr>`,
  );
  const body = html`<table id="audit" data-live><thead><tr><th>At</th><th>Actor</th><th>Action</th><th>Target</th><th>Detail</th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="5">No operator action yet.</td></tr>`}</tbody></table>`;
  return layout(ctx, 'audit', 'Audit log', body);
}
