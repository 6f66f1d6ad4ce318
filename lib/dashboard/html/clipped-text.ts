import { visibleText } from '../../core/index.js';
import { escapeHtml, html, SafeHtml } from './html.js';

/**
 * The most characters of one text a page shows inline (an error, an output, a revealed payload);
 * the rest is a link away, on a page of its own. With the store's default limits only a payload
 * (256 KiB) or an output (64 KiB) can be longer.
 */
export const TEXT_SHOWN = 16_384;

/**
 * Text shown to at most `max` characters, rendered as in a `<pre>` (escaped, line feeds kept), and
 * whether that cut it. Work is bounded by `max`, whatever the length of the text.
 */
export function clipText(value: string, max: number, options: { readonly keepNewlines?: boolean } = { keepNewlines: true }): { readonly text: SafeHtml; readonly cut: boolean } {
  // One character more than shown tells whether the whole text fits, without rendering all of it.
  const cut = visibleText(value, { ...options, maxLength: max + 1 }).length > max;
  return { text: new SafeHtml(escapeHtml(cut ? visibleText(value, { ...options, maxLength: max }) : value, options)), cut };
}

/**
 * A `<pre>` of at most {@link TEXT_SHOWN} characters; when the text is longer, a line after it says
 * so and links to the whole text.
 */
export function clippedPre(className: string, value: string, wholeHref: string, max = TEXT_SHOWN): SafeHtml {
  const { text, cut } = clipText(value, max);
  return html`<pre class="${className}">${text}</pre>${cut ? html`<p class="cut">The first ${max.toLocaleString('en-US')} characters of ${value.length.toLocaleString('en-US')}. <a href="${wholeHref}">Show the whole text</a></p>` : ''}`;
}
