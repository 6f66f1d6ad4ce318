import type { BlockedSequence } from '../../store/index.js';
import { html, href, type SafeHtml } from '../html/html.js';
import { csrfField, layout, stateBadge, timeCell, type PageContext } from '../html/layout.js';
import { errorPreview } from './jobs.page.js';

/** How many blocked sequences the page shows at once. */
export const SEQUENCES_PER_PAGE = 100;

/** One page of blocked sequences, and where the pages around it start. */
export interface BlockedSequencePage {
  readonly sequences: readonly BlockedSequence[];
  /** The key this page starts after, or null for the first page. */
  readonly after: string | null;
  /** The key the next page starts after, or null when none follows. */
  readonly next: string | null;
}

function sequenceRow(ctx: PageContext, { key, job, nextJobId }: BlockedSequence): SafeHtml {
  // The single actions ask the same question as a selection of one, and come back here.
  const select = html`<td><input type="checkbox" name="id" value="${job.id}" aria-label="select ${job.id}"></td>`;
  const actions = html`<td><a class="action" href="${href(ctx.base, ['sequences', 'replay'], { id: job.id })}">Replay</a> <a class="action" href="${href(ctx.base, ['sequences', 'cancel'], { id: job.id })}">Cancel</a></td>`;
  return html`<tr>
${ctx.readOnly ? '' : select}
<td><code>${key}</code></td>
<td><a href="${href(ctx.base, ['jobs', job.id])}">${job.name}</a> ${stateBadge(job.state)}</td>
<td class="error">${errorPreview(job.lastError)}</td>
<td>${timeCell(job.finishedAt, ctx.now)}</td>
<td><a class="id" href="${href(ctx.base, ['jobs', nextJobId])}">${nextJobId}</a></td>
${ctx.readOnly ? '' : actions}
</tr>`;
}

/**
 * Sequences held up by a job that failed for good (dead-lettered or quarantined), a page at a time
 * in key order, each with the job that waits behind it. Replaying the failed job releases the
 * next once it succeeds, cancelling (discarding) it releases the next at once: the dead-letter
 * page's bulk actions, asked first, coming back here.
 */
export function sequencesPage(ctx: PageContext, page: BlockedSequencePage): SafeHtml {
  const rows = page.sequences.map((sequence) => sequenceRow(ctx, sequence));
  const pager = html`<nav class="pager">${page.after === null ? '' : html`<a href="${href(ctx.base, ['sequences'])}">First sequences</a>`}
${page.next === null ? '' : html`<a rel="next" href="${href(ctx.base, ['sequences'], { after: page.next })}">Next ${SEQUENCES_PER_PAGE} sequences</a>`}</nav>`;
  const heads = ctx.readOnly
    ? html`<th>Sequence</th><th>Failed job</th><th>Last error</th><th>Failed</th><th>Waiting next</th>`
    : html`<th></th><th>Sequence</th><th>Failed job</th><th>Last error</th><th>Failed</th><th>Waiting next</th><th></th>`;
  const list = html`${ctx.readOnly || !rows.length ? '' : html`<p class="actions"><button type="submit">Replay selected</button> <button type="submit" formaction="${href(ctx.base, ['sequences', 'cancel'])}">Cancel selected</button></p>`}
<div class="scroll"><table id="sequences" data-live>
<thead><tr>${heads}</tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="${ctx.readOnly ? 5 : 7}">${page.after === null ? 'No sequence is blocked.' : 'No blocked sequence after this key.'}</td></tr>`}</tbody>
</table></div>`;
  const body = html`<p>Sequences whose next job waits behind a job that failed for good, ${SEQUENCES_PER_PAGE} at a time by key. Replay the failed job and the next one runs once it succeeds; cancel (discard) it and the next one is released at once. A sequence whose next job runs after failures (afterFailure continue) is never blocked.</p>
${ctx.readOnly ? list : html`<form method="post" action="${href(ctx.base, ['sequences', 'replay'])}">${csrfField(ctx)}${list}</form>`}
${pager}`;
  return layout(ctx, 'sequences', 'Sequences', body);
}
