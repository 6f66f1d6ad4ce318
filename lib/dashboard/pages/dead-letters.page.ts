import type { JobRecord } from '../../core/index.js';
import { html, href, type SafeHtml } from '../html/html.js';
import { csrfField, layout, timeCell, type PageContext } from '../html/layout.js';
import { errorPreview, JOB_HEADS, jobRow } from './jobs.page.js';

/** Dead-lettered jobs that share a wire name and the first line of their last error. */
export interface DeadLetterGroup {
  readonly name: string;
  readonly error: string;
  readonly jobs: readonly JobRecord[];
}

/** Groups jobs by name and error line, largest group first, keeping each group's newest-first order. */
export function groupDeadLetters(jobs: readonly JobRecord[]): DeadLetterGroup[] {
  const groups = new Map<string, { name: string; error: string; jobs: JobRecord[] }>();
  for (const job of jobs) {
    const error = errorPreview(job.lastError);
    const key = JSON.stringify([job.name, error]);
    const group = groups.get(key) ?? groups.set(key, { name: job.name, error, jobs: [] }).get(key)!;
    group.jobs.push(job);
  }
  return [...groups.values()].sort((a, b) => b.jobs.length - a.jobs.length);
}

/**
 * The most recent dead letters, grouped, with bulk replay and bulk cancel (discard). Selected rows
 * are POSTed to the confirmation question, a group's link names its filter; either way the
 * question lists what the action will touch, and only its confirmed POST acts.
 */
export function deadLettersPage(ctx: PageContext, jobs: readonly JobRecord[], shownLimit: number): SafeHtml {
  const groups = groupDeadLetters(jobs);
  const select = (job: JobRecord) => (ctx.readOnly ? html`<td></td>` : html`<td><input type="checkbox" name="id" value="${job.id}" aria-label="select ${job.id}"></td>`);
  const sections = groups.map(
    (group) => html`<tbody class="group">
<tr class="group-head"><th colspan="9">${group.jobs.length} × <code>${group.name}</code>: <span class="error">${group.error || '(no error)'}</span>
${ctx.readOnly ? '' : html` <a class="action" href="${href(ctx.base, ['dead-letters', 'replay'], { name: group.name, error: group.error })}">Replay these ${group.jobs.length}</a> <a class="action" href="${href(ctx.base, ['dead-letters', 'cancel'], { name: group.name, error: group.error })}">Cancel these ${group.jobs.length}</a>`}
· newest ${timeCell(group.jobs[0]!.finishedAt, ctx.now)}</th></tr>
${group.jobs.map((job) => jobRow(ctx, job, select(job)))}
</tbody>`,
  );
  const body = html`<p>The ${shownLimit} most recently dead-lettered jobs, grouped by name and error.</p>
<form method="post" action="${href(ctx.base, ['dead-letters', 'replay'])}">
${csrfField(ctx)}
${ctx.readOnly || !jobs.length ? '' : html`<p class="actions"><button type="submit">Replay selected</button> <button type="submit" formaction="${href(ctx.base, ['dead-letters', 'cancel'])}">Cancel selected</button></p>`}
<table id="dead-letters" data-live>
<thead><tr><th></th>${JOB_HEADS}</tr></thead>
${sections.length ? sections : html`<tbody><tr><td colspan="9">No dead letters.</td></tr></tbody>`}
</table>
</form>`;
  return layout(ctx, 'dead-letters', 'Dead letters', body);
}
