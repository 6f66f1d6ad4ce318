import { JOB_STATES } from '../../core/index.js';
import type { JobThroughput, LimitHolders, NodeRecord, QueueSummary, RateLimitStatus } from '../../store/index.js';
import { html, href, type SafeHtml } from '../html/html.js';
import { layout, relativeTime, stateBadge, timeCell, type PageContext } from '../html/layout.js';
import { throughputChart } from '../html/throughput-chart.js';
import { rateText, windowText } from './rate-limit.view.js';

/** What a queue's page shows. */
export interface QueueDetail {
  readonly name: string;
  /** Null for a queue the counts do not know (no job stored yet). */
  readonly summary: QueueSummary | null;
  readonly oldestDueAt: Date | null;
  /** Its due jobs among the 10,000 due jobs examined, and whether the read stopped there. */
  readonly due: { readonly count: number; readonly bounded: boolean };
  readonly limit: LimitHolders;
  /** Its rate limit's window now, or null when it has none. */
  readonly rate: RateLimitStatus | null;
  readonly nodes: readonly NodeRecord[];
  readonly throughput: JobThroughput;
  /** What becomes of its jobs that succeed, as the finish modes of the nodes serving it say (http/what-is-kept.ts). */
  readonly kept: string;
}

/** How many of the nodes serving a queue its page names. */
const NODES_NAMED = 20;

/** One queue: counts by state, claiming on or off, the oldest due job, its limits, its nodes and its throughput. */
export function queuePage(ctx: PageContext, detail: QueueDetail): SafeHtml {
  const { name, summary, limit, rate } = detail;
  const paused = summary?.paused ?? false;
  const body = html`<section id="queue" data-live>
<p>${paused ? stateBadge('paused') : stateBadge('active')} ${ctx.readOnly ? '' : html`<a class="action" href="${href(ctx.base, ['queues', name, paused ? 'resume' : 'pause'])}">${paused ? 'Resume' : 'Pause'}</a>`}
<a href="${href(ctx.base, ['jobs'], { queue: name })}">Its jobs</a></p>
<div class="scroll"><table><thead><tr>${JOB_STATES.map((state) => html`<th class="num">${state.replace(/_/g, ' ')}</th>`)}</tr></thead>
<tbody><tr>${JOB_STATES.map((state) => html`<td class="num"><a href="${href(ctx.base, ['jobs'], { queue: name, state })}">${summary?.counts[state] ?? 0}</a></td>`)}</tr></tbody></table></div>
<dl class="fields">
<dt>Due now</dt><dd>${detail.due.count.toLocaleString('en-US')}${detail.due.bounded ? ' or more' : ''}</dd>
<dt>Oldest due job</dt><dd>${detail.oldestDueAt ? html`due since ${timeCell(detail.oldestDueAt, ctx.now)}` : 'none waiting'}</dd>
<dt>Concurrency limit</dt><dd>${limit.max === null ? 'none' : html`${limit.holders.length}${limit.truncated ? '+' : ''} of ${limit.max} slots held`}</dd>
<dt>Rate limit</dt><dd>${rate === null ? 'none' : html`${rateText(rate)}: ${rate.startsInWindow} used in the last ${windowText(rate.perMs)}${rate.fullUntil ? html`, full until ${timeCell(rate.fullUntil, ctx.now)}` : ''}`}</dd>
<dt>Running nodes serving it</dt><dd>${
    detail.nodes.length
      ? html`${detail.nodes.slice(0, NODES_NAMED).map((node, i) => html`${i ? ', ' : ''}<code>${node.id}</code>`)}${detail.nodes.length > NODES_NAMED ? html` and ${detail.nodes.length - NODES_NAMED} more (<a href="${href(ctx.base, ['workers'])}">Workers</a>)` : ''}`
      : html`<strong>none</strong>: its jobs wait until a node that claims from it starts`
  }</dd>
<dt>Jobs that succeed</dt><dd id="kept">${detail.kept}</dd>
</dl>
<h2>Finished per minute</h2>
${throughputChart(detail.throughput, `Queue ${name}`)}
</section>`;
  return layout(ctx, '', `Queue ${name}`, body);
}

/** How long a job due since `at` has waited, as `3 min`. */
export function waitText(at: Date | null, now: Date): string {
  return at ? relativeTime(at, now).replace(' ago', '').replace('in ', '') : '—';
}
