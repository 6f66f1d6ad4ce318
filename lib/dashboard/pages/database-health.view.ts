import type { StoreHealth } from '../../store/index.js';
import { html, type SafeHtml } from '../html/html.js';
import { relativeTime } from '../html/layout.js';

/**
 * A transaction open this long is named as holding back vacuum: claims begin to pass dead rows of
 * the jobs table within a minute of it at a few hundred jobs a second (docs/operations.md).
 */
export const HELD_TRANSACTION_MS = 60_000;

/**
 * The overview's line on what holds back the cleanup of the jobs table: the oldest open transaction
 * and the dead rows it keeps. Nothing on a store that keeps no old row versions (SQLite, memory).
 */
export function databaseHealthView(health: StoreHealth, now: Date): SafeHtml {
  const { oldestTransaction: oldest, deadJobRows: dead, liveJobRows: live } = health;
  if (oldest === null && health.horizonXids === null && dead === null) return html``;
  const count = (n: number) => n.toLocaleString('en-US');
  const held = oldest !== null && oldest.ageMs >= HELD_TRANSACTION_MS;
  const since = relativeTime(new Date(now.getTime() - (oldest?.ageMs ?? 0)), now);
  const transaction = oldest
    ? `The oldest open transaction (pid ${oldest.pid}, ${oldest.state}) began ${since}${health.horizonXids === null ? '' : `; ${count(health.horizonXids)} transactions have begun since the oldest still running`}.`
    : 'No other open transaction holds back vacuum, or this role may not see it.';
  const effect = held ? ' Vacuum cannot remove the jobs rows it may still see, and every claim passes them.' : '';
  const rows = dead === null ? '' : ` Jobs table: ${count(dead)} dead rows beside ${count(live ?? 0)} live, last vacuumed ${health.lastVacuumAt ? relativeTime(health.lastVacuumAt, now) : 'never'}.`;
  return html`<p id="database" data-live${held ? html` class="held"` : ''}>${transaction}${effect}${rows}</p>`;
}
