import { visibleText, type JobRecord } from '../../core/index.js';
import { html, href, type SafeHtml } from '../html/html.js';
import { csrfField, layout, timeCell, type PageContext } from '../html/layout.js';
import { errorPreview, JOB_HEADS, jobRow } from './jobs.page.js';

/** Dead-lettered jobs that share a wire name and the pattern of their last error's first line. */
export interface DeadLetterGroup {
  readonly name: string;
  /** The error line's pattern ({@link errorPattern}): what the group's links name. */
  readonly error: string;
  /** The newest job's own error line, as written. */
  readonly example: string;
  readonly jobs: readonly JobRecord[];
}

const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;
/** `0x…`, or a run of eight or more hex digits with both a digit and a letter (object ids, hashes). */
const HEX = /\b(?:0x[0-9a-f]+|(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,})\b/gi;
const NUMBER = /\d+(?:\.\d+)*/g;

/**
 * The first line of an error with the parts that differ from job to job made alike: UUIDs become
 * `<uuid>`, hex ids `<hex>` and numbers `<n>`, so "order 4711 not found" and "order 4712 not
 * found" group together. Cut like {@link errorPreview}, after the replacing, so ids of different
 * lengths cannot cut at different places.
 */
export function errorPattern(error: string | null): string {
  if (!error) return '';
  const line = error.split('\n', 1)[0]!.replace(UUID, '<uuid>').replace(HEX, '<hex>').replace(NUMBER, '<n>');
  return visibleText(line, { maxLength: 120 });
}

/** How many groups the page shows at once, and how many jobs of each before a link to the whole group. */
export const GROUPS_PER_PAGE = 50;
export const ROWS_PER_GROUP = 10;

/** Groups jobs by name and error pattern, largest group first, keeping each group's newest-first order. */
export function groupDeadLetters(jobs: readonly JobRecord[]): DeadLetterGroup[] {
  const groups = new Map<string, { name: string; error: string; example: string; jobs: JobRecord[] }>();
  for (const job of jobs) {
    const error = errorPattern(job.lastError);
    const key = JSON.stringify([job.name, error]);
    const group = groups.get(key) ?? groups.set(key, { name: job.name, error, example: errorPreview(job.lastError), jobs: [] }).get(key)!;
    group.jobs.push(job);
  }
  return [...groups.values()].sort((a, b) => b.jobs.length - a.jobs.length);
}

/** A page number from the address: 1 for a missing or unreadable one. */
function pageNumber(value: string | null): number {
  const page = Number(value);
  return Number.isSafeInteger(page) && page >= 1 ? page : 1;
}

/**
 * The most recent dead letters, grouped, with bulk replay and bulk cancel (discard). Selected rows
 * are POSTed to the confirmation question, a group's link names its filter; either way the
 * question lists what the action will touch, and only its confirmed POST acts. The page shows
 * {@link GROUPS_PER_PAGE} groups of at most {@link ROWS_PER_GROUP} rows; `name` and `error` in the
 * address show one group whole. `sequencesBlocked` adds a pointer to the sequences page.
 */
export function deadLettersPage(ctx: PageContext, jobs: readonly JobRecord[], shownLimit: number, query: URLSearchParams, sequencesBlocked = false): SafeHtml {
  const name = query.get('name');
  const one = name !== null;
  const all = groupDeadLetters(jobs).filter((group) => !one || (group.name === name && group.error === (query.get('error') ?? '')));
  const page = one ? 1 : pageNumber(query.get('page'));
  const groups = one ? all : all.slice((page - 1) * GROUPS_PER_PAGE, page * GROUPS_PER_PAGE);
  const select = (job: JobRecord) => (ctx.readOnly ? html`<td></td>` : html`<td><input type="checkbox" name="id" value="${job.id}" aria-label="select ${job.id}"></td>`);
  const sections = groups.map((group) => {
    const rows = one ? group.jobs : group.jobs.slice(0, ROWS_PER_GROUP);
    const filter = { name: group.name, error: group.error };
    return html`<tbody class="group">
<tr class="group-head"><th colspan="9">${group.jobs.length} × <code>${group.name}</code>: <span class="error">${group.example || '(no error)'}</span>${group.jobs.length > 1 && group.error !== group.example ? html` <small>and others like it: <code>${group.error}</code></small>` : ''}
${ctx.readOnly ? '' : html` <a class="action" href="${href(ctx.base, ['dead-letters', 'replay'], filter)}">Replay these ${group.jobs.length}</a> <a class="action" href="${href(ctx.base, ['dead-letters', 'cancel'], filter)}">Cancel these ${group.jobs.length}</a>`}
· newest ${timeCell(group.jobs[0]!.finishedAt, ctx.now)}</th></tr>
${rows.map((job) => jobRow(ctx, job, select(job)))}
${rows.length < group.jobs.length ? html`<tr class="group-more"><td colspan="9"><a href="${href(ctx.base, ['dead-letters'], filter)}">Show all ${group.jobs.length} of this group</a></td></tr>` : ''}
</tbody>`;
  });
  const pages = Math.ceil(all.length / GROUPS_PER_PAGE);
  const pager = one
    ? html`<nav class="pager"><a href="${href(ctx.base, ['dead-letters'])}">All groups</a></nav>`
    : pages > 1
      ? html`<nav class="pager">${page > 1 ? html`<a href="${href(ctx.base, ['dead-letters'], { page: page - 1 })}">Larger groups</a>` : ''}
<span>Groups ${(page - 1) * GROUPS_PER_PAGE + 1}–${Math.min(page * GROUPS_PER_PAGE, all.length)} of ${all.length}</span>
${page < pages ? html`<a rel="next" href="${href(ctx.base, ['dead-letters'], { page: page + 1 })}">Smaller groups</a>` : ''}</nav>`
      : '';
  const older = jobs.length >= shownLimit ? html` Older ones: <a href="${href(ctx.base, ['jobs'], { state: 'dead_lettered' })}">every dead-lettered job</a>, in pages.` : '';
  // Replaying or cancelling a job that holds a sequence releases the job behind it; the sequences page shows which.
  const sequences = sequencesBlocked ? html`<p>Some failed jobs hold back the next job of their sequence: <a href="${href(ctx.base, ['sequences'])}">Sequences</a> lists them.</p>` : '';
  const body = html`<p>The ${shownLimit} most recently dead-lettered jobs, grouped by name and error.${older}</p>
${sequences}
<form method="post" action="${href(ctx.base, ['dead-letters', 'replay'])}">
${csrfField(ctx)}
${ctx.readOnly || !jobs.length ? '' : html`<p class="actions"><button type="submit">Replay selected</button> <button type="submit" formaction="${href(ctx.base, ['dead-letters', 'cancel'])}">Cancel selected</button></p>`}
<div class="scroll"><table id="dead-letters" data-live>
<thead><tr><th></th>${JOB_HEADS}</tr></thead>
${sections.length ? sections : html`<tbody><tr><td colspan="9">${one ? 'No dead letter of that name and error is left among the most recent.' : 'No dead letters.'}</td></tr></tbody>`}
</table></div>
</form>
${pager}`;
  return layout(ctx, 'dead-letters', 'Dead letters', body);
}
