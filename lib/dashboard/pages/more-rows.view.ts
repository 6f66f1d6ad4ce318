import { html, href, type SafeHtml } from '../html/html.js';
import type { PageContext } from '../html/layout.js';

/** How many rows a listing read, and whether a longer read is still to be had. */
export interface RowsShown {
  readonly shown: number;
  /** True while the page shows fewer than the store's most, so a "show more" link can ask for that. */
  readonly more: boolean;
}

/**
 * Under a listing that stopped at its limit: says so, and links to the longer listing while there
 * is one. Nothing when the listing holds fewer rows than it could.
 */
export function moreRowsNote(ctx: PageContext, section: string, count: number, rows: RowsShown, what: string): SafeHtml | '' {
  if (count < rows.shown) return '';
  return html`<p class="more">These are the first ${rows.shown.toLocaleString('en-US')} ${what}.${
    rows.more ? html` <a href="${href(ctx.base, [section], { more: 1 })}">Show up to 1,000</a>` : ' The page shows no more; the store keeps the rest.'
  }</p>`;
}
