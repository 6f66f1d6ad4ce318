import { isDeadLetterState, nextFireAfter, type JobRecord, type Recurrence } from '../../core/index.js';
import type { Schedule } from '../../store/index.js';
import { clippedPre } from '../html/clipped-text.js';
import { html, href, type SafeHtml } from '../html/html.js';
import { layout, stateBadge, timeCell, type PageContext } from '../html/layout.js';
import { errorPreview } from './jobs.page.js';

/** The pattern as an operator wrote it: `*\/5 * * * * (Europe/Berlin)` or `every 30 s`. */
export function patternText(schedule: Schedule): string {
  const recurrence = schedule.recurrence;
  if (recurrence.kind === 'cron') return `${recurrence.cron} (${recurrence.timezone})`;
  const ms = recurrence.everyMs;
  return ms % 3_600_000 === 0 ? `every ${ms / 3_600_000} h` : ms % 60_000 === 0 ? `every ${ms / 60_000} min` : ms % 1000 === 0 ? `every ${ms / 1000} s` : `every ${ms} ms`;
}

const zoneFormats = new Map<string, Intl.DateTimeFormat>();

/**
 * An instant as the wall clock of `zone` reads it, with the zone named and its offset then:
 * `2026-12-07 09:00:00 Europe/Berlin (GMT+1)`. Cron patterns are written in their zone's time, so
 * that is how an operator checks them.
 */
export function zonedTime(at: Date, zone: string): string {
  let format = zoneFormats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23', timeZoneName: 'shortOffset' });
    zoneFormats.set(zone, format);
  }
  const part = Object.fromEntries(format.formatToParts(at).map((p) => [p.type, p.value]));
  return `${part.year}-${part.month}-${part.day} ${part.hour}:${part.minute}:${part.second} ${zone} (${part.timeZoneName})`;
}

/** A schedule's time in UTC, and in its own zone too when that is not UTC. */
function scheduleTime(ctx: PageContext, schedule: Schedule, at: Date | null | undefined): SafeHtml {
  const zone = schedule.recurrence.kind === 'cron' ? schedule.recurrence.timezone : 'UTC';
  return html`${timeCell(at, ctx.now)}${at && zone !== 'UTC' && zone !== 'Etc/UTC' ? html` <span class="zone">${zonedTime(at, zone)}</span>` : ''}`;
}

/** The next `count` fire times, starting at the stored next tick; none for a schedule that does not mint. */
export function nextFireTimes(schedule: Schedule, count: number): Date[] {
  if (schedule.state !== 'active' || !schedule.nextFireAt) return [];
  const r = schedule.recurrence;
  const recurrence: Recurrence = r.kind === 'cron' ? r : { kind: 'interval', intervalMs: r.everyMs, anchorAt: r.anchorAt.getTime() };
  const times = [schedule.nextFireAt];
  while (times.length < count) {
    const next = nextFireAfter(recurrence, times[times.length - 1]!.getTime());
    if (next === null) break;
    times.push(new Date(next));
  }
  return times;
}

/** The schedule actions an operator may ask for in its current state. */
export function scheduleActions(schedule: Schedule): readonly ScheduleAction[] {
  if (schedule.state === 'dead_lettered') return ['replay', 'trigger'];
  return schedule.state === 'active' ? ['pause', 'trigger'] : ['resume', 'trigger'];
}

/** What an operator can do to a schedule: replay is how a dead-lettered one starts again. */
export type ScheduleAction = 'pause' | 'resume' | 'trigger' | 'replay';

function actionLinks(ctx: PageContext, schedule: Schedule): SafeHtml | '' {
  if (ctx.readOnly) return '';
  return html`${scheduleActions(schedule).map((action) => html`<a class="action" href="${href(ctx.base, ['schedules', schedule.id, action])}">${action[0]!.toUpperCase()}${action.slice(1)}</a> `)}`;
}

/** One page of schedules, oldest first, with their next tick and state. */
export function schedulesPage(ctx: PageContext, schedules: readonly Schedule[], next: string | null, after: string | null): SafeHtml {
  const rows = schedules.map(
    (schedule) => html`<tr>
<td><a class="id" href="${href(ctx.base, ['schedules', schedule.id])}">${schedule.id}</a></td>
<td>${schedule.name}</td>
<td>${schedule.queue}</td>
<td><code>${patternText(schedule)}</code></td>
<td>${stateBadge(schedule.state)}</td>
<td>${scheduleTime(ctx, schedule, schedule.state === 'active' ? schedule.nextFireAt : null)}</td>
<td>${schedule.lastJobId ? html`<a href="${href(ctx.base, ['jobs', schedule.lastJobId])}">${scheduleTime(ctx, schedule, schedule.lastFiredFor)}</a>` : '—'}</td>
<td class="num">${schedule.skippedTicks}</td>
<td>${actionLinks(ctx, schedule)}</td>
</tr>`,
  );
  const body = html`<div class="scroll"><table id="schedules" data-live>
<thead><tr><th>Id</th><th>Name</th><th>Queue</th><th>Pattern</th><th>State</th><th>Next fire</th><th>Last occurrence</th><th class="num">Skipped ticks</th><th></th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="9">No schedules.</td></tr>`}</tbody>
</table></div>
<nav class="pager">${after ? html`<a href="${href(ctx.base, ['schedules'])}">First page</a>` : ''}
${next ? html`<a rel="next" href="${href(ctx.base, ['schedules'], { after: next })}">Next page</a>` : ''}</nav>`;
  return layout(ctx, 'schedules', 'Schedules', body);
}

/** What the schedule page shows besides the schedule. */
export interface ScheduleDetail {
  readonly schedule: Schedule;
  /** Its most recent occurrence, if still stored. */
  readonly lastJob: JobRecord | null;
  /** The occurrence whose dead-lettering stopped it, if any. */
  readonly haltedJob: JobRecord | null;
  /** Its most recent occurrences still stored, newest first. */
  readonly recent: readonly JobRecord[];
}

/** One schedule: its definition, next five fire times, last occurrence and, when stopped, why. */
export function schedulePage(ctx: PageContext, detail: ScheduleDetail): SafeHtml {
  const { schedule, lastJob, haltedJob } = detail;
  const halted =
    schedule.state === 'dead_lettered'
      ? html`<section class="halted"><h2>Why it stopped</h2>
<p>Its occurrence ${schedule.haltedJobId ? html`<a href="${href(ctx.base, ['jobs', schedule.haltedJobId])}">${schedule.haltedJobId}</a>` : ''} ended ${haltedJob ? stateBadge(haltedJob.state) : 'dead-lettered'}; the schedule mints nothing until it is replayed${haltedJob && isDeadLetterState(haltedJob.state) ? ', or that occurrence is' : ''}.</p>
${haltedJob?.lastError ? clippedPre('error', haltedJob.lastError, href(ctx.base, ['jobs', haltedJob.id, 'error'])) : ''}</section>`
      : '';
  const body = html`<section id="schedule" data-live>
<dl class="fields">
<dt>Id</dt><dd><code>${schedule.id}</code></dd>
<dt>Job name</dt><dd>${schedule.name}</dd>
<dt>Queue</dt><dd>${schedule.queue}</dd>
<dt>Pattern</dt><dd><code>${patternText(schedule)}</code></dd>
<dt>State</dt><dd>${stateBadge(schedule.state)}</dd>
<dt>Catch-up</dt><dd>${schedule.catchUp}, misfire grace ${schedule.misfireGraceMs / 1000} s${schedule.noOverlap ? ', no overlap' : ''}</dd>
<dt>Skipped ticks</dt><dd>${schedule.skippedTicks}${schedule.lastSkipReason ? html`, last for ${timeCell(schedule.lastSkippedFor, ctx.now)} (${schedule.lastSkipReason})` : ''}</dd>
<dt>Last occurrence</dt><dd>${lastJob ? html`<a href="${href(ctx.base, ['jobs', lastJob.id])}">${lastJob.id}</a> ${stateBadge(lastJob.state)}, for ${scheduleTime(ctx, schedule, lastJob.scheduledFor)}` : '—'}</dd>
</dl>
${halted}
<h2>Recent occurrences</h2>
${detail.recent.length
    ? html`<div class="scroll"><table class="occurrences"><thead><tr><th>For</th><th>Job</th><th>State</th><th class="num">Attempt</th><th>Last error</th></tr></thead>
<tbody>${detail.recent.map((job) => html`<tr><td>${timeCell(job.scheduledFor, ctx.now)}</td><td><a class="id" href="${href(ctx.base, ['jobs', job.id])}">${job.id}</a></td><td>${stateBadge(job.state)}</td><td class="num">${job.attempt}/${job.maxAttempts}</td><td class="error">${errorPreview(job.lastError)}</td></tr>`)}</tbody></table></div>`
    : html`<p>None stored: it has not fired yet, or retention removed them.</p>`}
<h2>Next fire times</h2>
${(() => {
  const times = nextFireTimes(schedule, 5);
  return times.length ? html`<ol class="fire-times">${times.map((at) => html`<li>${scheduleTime(ctx, schedule, at)}</li>`)}</ol>` : html`<p>None: the schedule is ${schedule.state.replace('_', ' ')}${schedule.nextFireAt ? '' : ' and its pattern never fires again'}.</p>`;
})()}
<p class="actions">${actionLinks(ctx, schedule)}</p>
</section>`;
  return layout(ctx, 'schedules', `Schedule ${schedule.name}`, body);
}
