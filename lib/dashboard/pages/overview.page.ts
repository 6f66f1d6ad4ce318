import { JOB_STATES, type JobState } from '../../core/index.js';
import type { JobCountTotals, JobThroughput, QueueOldestDueResult, QueueSummary, StoreHealth } from '../../store/index.js';
import { html, href, type SafeHtml } from '../html/html.js';
import { layout, relativeTime, stateBadge, type PageContext } from '../html/layout.js';
import { throughputChart } from '../html/throughput-chart.js';
import { waitText } from './queue.page.js';
import { databaseHealthView } from './database-health.view.js';

/** How many queues the overview's table shows at once. */
export const QUEUES_PER_PAGE = 100;

/** What the overview shows. */
export interface OverviewData {
  /** One page of queues, by name. */
  readonly queues: readonly QueueSummary[];
  /** The queue this page starts after, or null for the first page. */
  readonly after: string | null;
  /** The last queue of this page when more follow, or null. */
  readonly next: string | null;
  /** Jobs per state over every queue, and how many queues there are. */
  readonly totals: JobCountTotals;
  /** Per queue, the oldest due job and the due count; read without `queues`, so every queue with a due job. */
  readonly oldestDue: QueueOldestDueResult;
  /** Finished jobs per minute over the last hour, all queues. */
  readonly throughput: JobThroughput;
  /** Nodes running now. */
  readonly runningNodes: number;
  /** What becomes of a job that succeeds, as the running nodes' finish modes say (http/what-is-kept.ts). */
  readonly kept: string;
  /** What holds back the cleanup of the jobs table (PostgreSQL; every field null elsewhere). */
  readonly health: StoreHealth;
}

/** Which queues the table holds, of how many. */
function queuesShown(data: OverviewData): string {
  const count = data.totals.queues.toLocaleString('en-US');
  if (data.queues.length === 0) return `${count} ${data.totals.queues === 1 ? 'queue' : 'queues'}.`;
  const paged = data.after !== null || data.next !== null;
  return paged
    ? `Queues ${data.queues[0]!.name} to ${data.queues.at(-1)!.name} of ${count}, by name, ${QUEUES_PER_PAGE} at a time.`
    : `${count} ${data.totals.queues === 1 ? 'queue' : 'queues'}, by name.`;
}

/** Totals for the cluster, then a page of queues, each with its counts by state and its pause switch. */
export function overviewPage(ctx: PageContext, data: OverviewData): SafeHtml {
  const { queues, oldestDue } = data;
  const total = (state: JobState) => data.totals.counts[state] ?? 0;
  const now = oldestDue.now;
  // The read starts at the oldest due job of all, so the earliest of the queues' is the cluster's.
  const oldestAt = oldestDue.queues.reduce<Date | null>((min, entry) => (entry.oldestDueAt && (!min || entry.oldestDueAt < min) ? entry.oldestDueAt : min), null);
  const oldestWait = oldestAt ? relativeTime(oldestAt, now).replace(' ago', '') : 'none waiting';
  const oldestByQueue = new Map(oldestDue.queues.map((entry) => [entry.queue, entry]));
  // The due count is read with the oldest due job, from at most 10,000 due jobs: past that it says "+".
  const bounded = (count: number) => `${count.toLocaleString('en-US')}${oldestDue.examinedUntil ? '+' : ''}`;
  const finished = data.throughput.buckets.reduce((sum, bucket) => sum + bucket.succeeded + bucket.deadLettered + bucket.cancelled, 0);
  // The throughput now: the last whole minute, since the current one has only begun.
  const lastMinute = data.throughput.buckets.at(-2);
  const perMinute = lastMinute ? lastMinute.succeeded + lastMinute.deadLettered + lastMinute.cancelled : 0;
  const cards: readonly (readonly [string, string | number, string])[] = [
    ['Running', total('running'), href(ctx.base, ['jobs'], { state: 'running' })],
    ['Due now', bounded(oldestDue.dueExamined), `${ctx.base || '/'}#queues`],
    ['Scheduled', total('scheduled'), href(ctx.base, ['jobs'], { state: 'scheduled' })],
    ['Awaiting parents', total('awaiting_parents'), href(ctx.base, ['jobs'], { state: 'awaiting_parents' })],
    ['Dead-lettered', total('dead_lettered'), href(ctx.base, ['dead-letters'])],
    ['Oldest due job waits', oldestWait, href(ctx.base, ['jobs'], { state: 'scheduled', order: 'oldest' })],
    ['Finished last minute', perMinute, href(ctx.base, ['jobs'], { state: 'succeeded' })],
    ['Finished in the last hour', `${finished}${data.throughput.partialUntil ? '+' : ''}`, href(ctx.base, ['jobs'], { state: 'succeeded' })],
    ['Running nodes', data.runningNodes, href(ctx.base, ['workers'])],
  ];
  const rows = queues.map(
    (queue) => html`<tr>
<th scope="row"><a href="${href(ctx.base, ['queues', queue.name])}">${queue.name}</a></th>
${JOB_STATES.map((state) => html`<td class="num">${queue.counts[state] ?? 0}</td>`)}
<td class="num">${bounded(oldestByQueue.get(queue.name)?.dueCount ?? 0)}</td>
<td class="num">${waitText(oldestByQueue.get(queue.name)?.oldestDueAt ?? null, now)}</td>
<td>${queue.paused ? stateBadge('paused') : stateBadge('active')}</td>
<td>${ctx.readOnly ? '' : html`<a class="action" href="${href(ctx.base, ['queues', queue.name, queue.paused ? 'resume' : 'pause'])}">${queue.paused ? 'Resume' : 'Pause'}</a>`}</td>
</tr>`,
  );
  const body = html`<section class="cards" id="totals" data-live>
${cards.map(([label, value, link]) => html`<a class="card" href="${link}"><span class="value">${value}</span><span class="label">${label}</span></a>`)}
</section>
<section id="throughput" data-live>${throughputChart(data.throughput, 'All queues')}</section>
<p id="kept" data-live>${data.kept}</p>
${databaseHealthView(data.health, now)}
<h2>Queues</h2>
<form class="filters" method="get" action="${href(ctx.base, ['queues'])}"><label>Open a queue <input name="name" size="16" aria-label="queue name"></label> <button type="submit">Open</button></form>
<p id="queues-shown" data-live>${queuesShown(data)}</p>
<div class="scroll"><table id="queues" data-live>
<thead><tr><th>Queue</th>${JOB_STATES.map((state) => html`<th class="num">${state.replace(/_/g, ' ')}</th>`)}<th class="num">Due now</th><th class="num">Oldest due waits</th><th>Claiming</th><th></th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="${JOB_STATES.length + 5}">${data.after ? 'No queue comes after these.' : 'No queue holds jobs yet.'}</td></tr>`}</tbody>
</table></div>
${data.after || data.next ? html`<nav class="pager">${data.after ? html`<a href="${ctx.base || '/'}">First queues</a>` : ''}
${data.next ? html`<a rel="next" href="${href(ctx.base, [], { after: data.next })}">Next ${QUEUES_PER_PAGE} queues</a>` : ''}</nav>` : ''}`;
  return layout(ctx, '', 'Overview', body);
}
