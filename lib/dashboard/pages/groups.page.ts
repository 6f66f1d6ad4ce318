import { GROUP_COUNT_CAP, type WaitingGroup } from '../../store/index.js';
import { html, href, type SafeHtml } from '../html/html.js';
import { layout, timeCell, type PageContext } from '../html/layout.js';

/** How many groups the page shows at once: each costs the store two bounded counts. */
export const GROUPS_PER_PAGE = 100;

/** One page of groups, and where the pages around it start. */
export interface GroupPage {
  readonly groups: readonly WaitingGroup[];
  /** The group this page starts after, or null for the first page. */
  readonly after: string | null;
  /** The group the next page starts after, or null when none follows. */
  readonly next: string | null;
}

/** A count the store stopped at its cap, as `1,000+`. */
function countCell(count: number, capped: boolean): string {
  return `${count.toLocaleString('en-US')}${capped ? '+' : ''}`;
}

function groupRow(ctx: PageContext, group: WaitingGroup): SafeHtml {
  return html`<tr>
<td><code>${group.group}</code></td>
<td class="num">${countCell(group.due, group.dueCapped)}</td>
<td>${timeCell(group.oldestDueAt, ctx.now)}</td>
<td class="num">${countCell(group.later, group.laterCapped)}</td>
<td class="num">${group.concurrencyMax === null ? '—' : group.concurrencyMax}</td>
</tr>`;
}

/**
 * The groups with waiting jobs (docs/groups.md), a page at a time by name: how many are due and
 * since when the oldest of them waits, how many are scheduled for later, and the group's cap.
 */
export function groupsPage(ctx: PageContext, page: GroupPage): SafeHtml {
  const rows = page.groups.map((group) => groupRow(ctx, group));
  const pager = html`<nav class="pager">${page.after === null ? '' : html`<a href="${href(ctx.base, ['groups'])}">First groups</a>`}
${page.next === null ? '' : html`<a rel="next" href="${href(ctx.base, ['groups'], { after: page.next })}">Next ${GROUPS_PER_PAGE} groups</a>`}</nav>`;
  const cap = GROUP_COUNT_CAP.toLocaleString('en-US');
  const body = html`<p>Groups with waiting jobs, ${GROUPS_PER_PAGE} at a time by name. Claims take turns across the groups that have due jobs, so a group with a backlog drains at its share of the claims and its oldest due job ages with the backlog: Due going down between two looks means the group is served; an age that grows while Due does not shrink means it is held back, by its cap, a paused queue, no worker serving its queue or more urgent priorities, and a job's page says which. Counts stop at ${cap} (shown as ${cap}+). Running jobs are not counted here: a group's cap is its key's, and the limits page lists the jobs that hold it.</p>
<div class="scroll"><table id="groups" data-live>
<thead><tr><th>Group</th><th>Due</th><th>Oldest due</th><th>Later</th><th>Cap</th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="5">${page.after === null ? 'No group has waiting jobs.' : 'No group with waiting jobs after this one.'}</td></tr>`}</tbody>
</table></div>
${pager}`;
  return layout(ctx, 'groups', 'Groups', body);
}
