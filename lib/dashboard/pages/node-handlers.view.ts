import { visibleText } from '../../core/index.js';
import { html, href, type SafeHtml } from '../html/html.js';
import type { PageContext } from '../html/layout.js';

/** One handler the process serving the dashboard runs, as the Workers page lists it. */
export interface NodeHandler {
  /** The wire name it handles. */
  readonly name: string;
  readonly queue: string;
  /** Set when it takes many jobs of its name in one call: the most per call, and how long a batch may wait to fill. */
  readonly batch: { readonly size: number; readonly waitMs: number } | null;
  /** The longest one attempt (or one batch call) may run, or null for no limit. */
  readonly timeoutMs: number | null;
  /** Whether each attempt gets a transaction that commits with its success. */
  readonly transaction: boolean;
}

/**
 * What the dashboard knows of the handlers of the process it is served from. The store records no
 * handler, so only the Nest module can tell: `worker` with the node's id and its handlers, or
 * `none` when the app was built with `worker: false`. Absent (undefined) when the dashboard is
 * served from the store alone.
 */
export type LocalHandlers = { readonly runs: 'worker'; readonly workerId: string; readonly handlers: readonly NodeHandler[] } | { readonly runs: 'none' };

/** The most handlers the section lists: an app's handlers are few, but every table has a most. */
export const HANDLERS_SHOWN = 200;
/** The most characters of a wire name a cell shows, as an error preview's. */
export const HANDLER_NAME_SHOWN = 120;

function batchCell(batch: NodeHandler['batch']): string {
  if (!batch) return 'no';
  return `up to ${batch.size} ${batch.size === 1 ? 'job' : 'jobs'} a call, ${batch.waitMs > 0 ? `waits up to ${batch.waitMs} ms to fill` : 'no wait'}`;
}

function handlerRow(ctx: PageContext, handler: NodeHandler): SafeHtml {
  // The link carries the whole name; the cell shows its start, with control characters made visible.
  return html`<tr>
<td><a href="${href(ctx.base, ['jobs'], { name: handler.name })}"><code>${visibleText(handler.name, { maxLength: HANDLER_NAME_SHOWN })}</code></a></td>
<td><a href="${href(ctx.base, ['queues', handler.queue])}">${visibleText(handler.queue, { maxLength: HANDLER_NAME_SHOWN })}</a></td>
<td>${batchCell(handler.batch)}</td>
<td class="num">${handler.timeoutMs ?? 'none'}</td>
<td>${handler.transaction ? 'yes' : 'no'}</td>
</tr>`;
}

/**
 * The "Handlers on this node" section: the handlers of the app the dashboard is mounted in, by
 * wire name, or one line saying why it cannot list them. Not live: they are fixed at boot.
 */
export function nodeHandlersSection(ctx: PageContext, local: LocalHandlers | undefined): SafeHtml {
  const heading = html`<h2>Handlers on this node</h2>`;
  if (local === undefined) {
    return html`${heading}<p>This dashboard is served from the store alone, which records no handlers; mounted in a Nest app that runs a worker, it lists that app's handlers here.</p>`;
  }
  if (local.runs === 'none') return html`${heading}<p>This app runs no worker (<code>worker: false</code>), so no handler runs here.</p>`;
  const sorted = [...local.handlers].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const rows = sorted.slice(0, HANDLERS_SHOWN).map((handler) => handlerRow(ctx, handler));
  return html`${heading}<p>The <code>@Job</code> handlers of the app this dashboard is mounted in, as its worker <code>${local.workerId}</code> runs them; other nodes may run other handlers, which the store does not record. A batch call takes one of the node's concurrency slots, however many jobs it holds.</p>
<div class="scroll"><table id="node-handlers">
<thead><tr><th>Name</th><th>Queue</th><th>Batches</th><th class="num">Timeout (ms)</th><th>Attempt transaction</th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="5">No <code>@Job</code> handler is registered in this app.</td></tr>`}</tbody>
</table></div>
${sorted.length > HANDLERS_SHOWN ? html`<p class="more">These are the first ${HANDLERS_SHOWN} of ${sorted.length} handlers, by name.</p>` : ''}`;
}
