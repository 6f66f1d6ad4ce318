import type { NodeRecord } from '../../store/index.js';
import { html, href, type SafeHtml } from '../html/html.js';
import { layout, timeCell, type PageContext } from '../html/layout.js';
import { LIVE_WINDOW_MS, nodeStatus } from '../why/live-nodes.js';
import { moreRowsNote, type RowsShown } from './more-rows.view.js';
import { nodeHandlersSection, type LocalHandlers } from './node-handlers.view.js';

/**
 * Every node in the registry, most recently seen first: running, silent (no beat lately) or
 * stopped; then the handlers of the app the dashboard is mounted in (`local`, absent when it is
 * served from the store alone).
 */
export function workersPage(ctx: PageContext, nodes: readonly NodeRecord[], now: Date, rows: RowsShown, local?: LocalHandlers): SafeHtml {
  const cells = nodes.map((node) => {
    const status = nodeStatus(node, now);
    return html`<tr>
<td><code>${node.id}</code></td>
<td><span class="state state-node-${status}">${status}</span></td>
<td>${node.host}</td>
<td class="num">${node.pid}</td>
<td>${node.version}</td>
<td>${node.queues.map((queue, i) => html`${i ? ', ' : ''}<a href="${href(ctx.base, ['queues', queue])}">${queue}</a>`)}</td>
<td class="num">${node.running} / ${node.concurrency}</td>
<td>${timeCell(node.startedAt, now)}</td>
<td>${timeCell(node.stoppedAt ?? node.lastSeenAt, now)}</td>
</tr>`;
  });
  const body = html`<p>Nodes that ran in the last day, most recently seen first. A node counts as running while it beats at least every ${LIVE_WINDOW_MS / 1000} s; one that stopped beating without a stop record is silent, and most likely died.</p>
<div class="scroll"><table id="workers" data-live>
<thead><tr><th>Id</th><th>Status</th><th>Host</th><th class="num">Pid</th><th>Version</th><th>Queues</th><th class="num">Running / concurrency</th><th>Started</th><th>Last heartbeat</th></tr></thead>
<tbody>${cells.length ? cells : html`<tr><td colspan="9">No node has reported in.</td></tr>`}</tbody>
</table></div>
${moreRowsNote(ctx, 'workers', nodes.length, rows, 'nodes, most recently seen first')}
${nodeHandlersSection(ctx, local)}`;
  return layout(ctx, 'workers', 'Workers', body);
}
