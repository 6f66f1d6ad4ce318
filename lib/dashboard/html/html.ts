import { visibleText } from '../../core/index.js';

/**
 * Markup that is safe to send: either written by the dashboard itself or built by {@link html},
 * which escapes everything it did not write. Pages never concatenate strings into markup; they
 * compose `SafeHtml` values, so escaping holds by construction rather than by care at each site.
 */
export class SafeHtml {
  /** @internal Only {@link html} and {@link trusted} make these. */
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ENTITIES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

/**
 * Text as HTML: control, bidi and separator characters first made visible (`\x1b`, `\u202e`), then
 * the characters that could open a tag or close an attribute replaced by entities. Safe in element
 * content and in quoted attribute values, which is everywhere the dashboard puts text.
 */
export function escapeHtml(value: string, options: { readonly keepNewlines?: boolean } = {}): string {
  return visibleText(value, options).replace(/[&<>"'`]/g, (char) => ENTITIES[char]!);
}

/** Text of several lines (a payload, an output, an error with its stack) for a `<pre>`: escaped, line feeds kept. */
export function multiline(value: string): SafeHtml {
  return new SafeHtml(escapeHtml(value, { keepNewlines: true }));
}

/** A value a template may hold: text (escaped), a number, markup, nothing, or a list of these. */
export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false || value === true) return '';
  if (value instanceof SafeHtml) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

/** The tagged template every page is written with: the literal parts are markup, every value is escaped. */
export function html(strings: TemplateStringsArray, ...values: readonly HtmlValue[]): SafeHtml {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!;
  return new SafeHtml(out);
}

/** Markup the dashboard wrote itself, e.g. a constant icon. Never pass it text that came from a job. */
export function trusted(markup: string): SafeHtml {
  return new SafeHtml(markup);
}

/**
 * A dashboard URL: the mount base, path segments (each percent-encoded, so an id or a queue name
 * cannot add a segment or a scheme), and query parameters (empty ones left out).
 */
export function href(base: string, segments: readonly string[], query: Readonly<Record<string, string | number | readonly string[] | undefined | null>> = {}): string {
  const path = [base, ...segments.map((segment) => encodeURIComponent(segment))].join('/') || '/';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (Array.isArray(value)) for (const item of value) params.append(key, item);
    else if (value !== undefined && value !== null && value !== '') params.set(key, String(value));
  }
  const search = params.toString();
  return search ? `${path}?${search}` : path;
}
