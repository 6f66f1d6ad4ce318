/** Text tables and JSON for the CLI's listings. */
import { InvalidArgumentError } from 'commander';
import { visibleText } from '../core/index.js';

export type Format = 'text' | 'json';

export function parseFormat(value: string): Format {
  if (value !== 'text' && value !== 'json') throw new InvalidArgumentError(`--format must be text or json, got "${value}".`);
  return value;
}

/**
 * One line, at most `width` characters: the first line of `text`, rendered visibly (text from jobs
 * may carry terminal escapes) and then cut with an ellipsis, so no cut leaves a sequence open.
 */
export function oneLine(text: string | null | undefined, width: number): string {
  if (!text) return '-';
  return visibleText(text.split('\n')[0]!.trim(), { maxLength: width });
}

/** Renders rows as aligned columns under a header. Every cell is rendered visibly. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const shown = rows.map((row) => row.map((cell) => visibleText(cell)));
  const widths = headers.map((h, i) => Math.max(h.length, ...shown.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  return [line(headers), ...shown.map(line)].join('\n');
}

export function iso(date: Date | null | undefined): string {
  return date ? date.toISOString() : '-';
}

/**
 * Characters JSON.stringify leaves raw that a terminal may act on: DEL, the C1 controls (8-bit CSI
 * and OSC among them), bidi controls and the line separators. Inside JSON text they can only occur
 * in strings, where a `\u` escape parses back to the same character.
 */
const JSON_ACTIVE = /[\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

/** JSON output: exact (it parses back to the stored text), and safe to print on a terminal. */
export function json(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(JSON_ACTIVE, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A word the shell passes on as it is, or the text in single quotes: a key or a group may hold spaces, quotes or `$`. */
function shellWord(text: string): string {
  return /^[A-Za-z0-9_.:/@%+=,-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * The line that leads to the next page of a listing paged by text (`what`: a sequence key, a
 * group), typed back as `--after`. Text shown with characters made visible is not the text, so
 * the line says to take it from `--format json` then.
 */
export function nextPageAfter(next: string, what: string): string {
  const exact = visibleText(next) === next ? '' : ` (the ${what} holds characters shown escaped; take it from --format json)`;
  return visibleText(`Next page: add --after ${shellWord(next)} to the same command.${exact}`);
}
