/** Text tables and JSON for the CLI's listings. */
import { InvalidArgumentError } from 'commander';

export type Format = 'text' | 'json';

export function parseFormat(value: string): Format {
  if (value !== 'text' && value !== 'json') throw new InvalidArgumentError(`--format must be text or json, got "${value}".`);
  return value;
}

/** One line, at most `width` characters: the first line of `text`, cut with an ellipsis. */
export function oneLine(text: string | null | undefined, width: number): string {
  if (!text) return '-';
  const line = text.split('\n')[0]!.trim();
  return line.length > width ? `${line.slice(0, width - 1)}…` : line;
}

/** Renders rows as aligned columns under a header. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  return [line(headers), ...rows.map(line)].join('\n');
}

export function iso(date: Date | null | undefined): string {
  return date ? date.toISOString() : '-';
}

export function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}
