import type { HistoryEntry } from '../../store/index.js';
import type { JobRecord } from '../../core/index.js';
import { html, href, multiline, type SafeHtml } from '../html/html.js';
import { layout, timeCell, type PageContext } from '../html/layout.js';
import { prettyJson, type JobTextPart } from './job.page.js';

const TITLES: Readonly<Record<JobTextPart, string>> = { payload: 'payload', output: 'output', error: 'last error', progress: 'last reported progress' };

/** The text of a job's part, or null when it has none. */
export function jobText(job: JobRecord, part: JobTextPart): string | null {
  if (part === 'error') return job.lastError;
  const value = part === 'payload' ? job.payload : part === 'output' ? job.output : job.progress;
  return value === null || value === undefined ? null : prettyJson(value);
}

/**
 * One text of a job, whole: what its page cut after the first characters. Its size is what the
 * store lets the text be (a payload 256 KiB, an output 64 KiB, an error 8 KiB by default).
 */
export function jobTextPage(ctx: PageContext, job: JobRecord, part: JobTextPart | { readonly entry: HistoryEntry }): SafeHtml {
  const entry = typeof part === 'object' ? part.entry : null;
  const text = entry ? entry.error : jobText(job, part as JobTextPart);
  const what = entry ? 'error' : TITLES[part as JobTextPart];
  const body = html`<p><a href="${href(ctx.base, ['jobs', job.id])}">Back to the job</a>${entry ? html` · the ${entry.state.replace(/_/g, ' ')} transition of attempt ${entry.attempt}, ${timeCell(entry.at, ctx.now)}` : ''}</p>
${text === null ? html`<p>None.</p>` : html`<pre class="${entry || part === 'error' ? 'error' : String(part)}">${multiline(text)}</pre>`}`;
  return layout(ctx, 'jobs', `Job ${job.name}: ${what}`, body);
}
