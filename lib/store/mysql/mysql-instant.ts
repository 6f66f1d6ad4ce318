/**
 * Instants cross the wire as UTC text ('2026-12-04 19:30:00.123'), never as Date objects: mysql2
 * writes a Date in the connection's `timezone` option (the process's zone by default), and reads
 * DATETIME back the same way, so two processes in different zones would disagree by hours. The
 * columns are DATETIME(3) holding UTC, written from UTC_TIMESTAMP(3) or from this text, so neither
 * the server's nor the session's `time_zone` takes part.
 */

/** The text form of an instant, as a DATETIME(3) column takes it. */
export function toMysqlInstant(ms: number): string {
  return new Date(ms).toISOString().slice(0, 23).replace('T', ' ');
}

/** An instant read back as text by the adapter's typeCast; null stays null. */
export function fromMysqlInstant(text: string): Date;
export function fromMysqlInstant(text: string | null): Date | null;
export function fromMysqlInstant(text: string | null): Date | null {
  if (text === null) return null;
  const match = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?$/.exec(text);
  if (!match) throw new Error(`Unreadable DATETIME text from the server: ${JSON.stringify(text.slice(0, 40))}.`);
  const [, y, mo, d, h, mi, s, frac = '0'] = match;
  const ms = Number(frac.padEnd(3, '0').slice(0, 3));
  const date = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), ms));
  // Date.UTC maps years 0-99 to 1900-1999; the store never writes those, but read them truthfully.
  if (Number(y) < 100) date.setUTCFullYear(Number(y));
  return date;
}

/** The database's clock, in milliseconds, as a SQL expression (UTC whatever the session's time zone). */
export const MYSQL_NOW = 'UTC_TIMESTAMP(3)';
