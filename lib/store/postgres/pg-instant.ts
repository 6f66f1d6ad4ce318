/**
 * An instant (epoch milliseconds) as timestamptz text in UTC, for a statement parameter:
 * `1850-01-01T00:00:00.000+00:00`, with ` BC` for the years before 1 as PostgreSQL writes them
 * (year 0 is 1 BC).
 *
 * Given a Date, node-postgres writes it in the process's local time with the offset in whole
 * minutes. Before time zones were standardized the offset was local mean time, with seconds
 * (Amsterdam's was +00:19:32), so under such a TZ every earlier instant was stored seconds off.
 * Text in UTC names the instant exactly, whatever the process's time zone.
 */
export function pgInstant(ms: number): string {
  const date = new Date(ms);
  const year = date.getUTCFullYear();
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  const text =
    `${pad(year < 1 ? 1 - year : year, 4)}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}` +
    `T${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}.${pad(date.getUTCMilliseconds(), 3)}+00:00`;
  return year < 1 ? `${text} BC` : text;
}
