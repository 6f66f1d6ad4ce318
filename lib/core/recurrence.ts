import { Cron } from 'croner';
import { InvalidArgumentError } from './errors/index.js';

/**
 * When a recurring schedule fires: a cron pattern in an IANA time zone (UTC by default), or a fixed
 * interval counted from an anchor instant.
 *
 * DST, as croner computes it: a wall-clock time that does not exist on a spring-forward day (02:30
 * in Berlin on the last Sunday of March) fires when the gap ends (03:00); a time that occurs twice
 * on a fall-back day fires once, at its first occurrence; patterns finer than a day (`0 * * * *`)
 * fire at every real instant that matches, so a fall-back day has 25 hourly runs.
 */
export type Recurrence =
  | { readonly kind: 'cron'; readonly cron: string; readonly timezone: string }
  | { readonly kind: 'interval'; readonly intervalMs: number; readonly anchorAt: number };

const patterns = new Map<string, Cron>();

function cronOf(cron: string, timezone: string): Cron {
  const key = `${timezone}\u0000${cron}`;
  let compiled = patterns.get(key);
  if (!compiled) {
    // UTC never shifts, so a fixed offset of zero gives the same ticks; croner computes those
    // without Intl, about fifteen times faster, which matters to a minter catching up.
    compiled = new Cron(cron, timezone === 'UTC' ? { utcOffset: 0, paused: true } : { timezone, paused: true });
    patterns.set(key, compiled);
  }
  return compiled;
}

/** Refuses a cron pattern croner cannot parse, with its reason. */
export function assertCron(value: unknown, argument = 'cron'): string {
  if (typeof value !== 'string' || value.trim().length === 0 || value.length > 200) {
    throw new InvalidArgumentError(`${argument} must be a cron pattern such as "0 9 * * 1-5", got ${JSON.stringify(String(value)).slice(0, 80)}.`, argument);
  }
  try {
    new Cron(value, { paused: true });
  } catch (error) {
    throw new InvalidArgumentError(
      // croner's reason quotes the pattern raw; fold its whitespace so the message stays one line.
      `${argument} ${JSON.stringify(value)} is not a valid cron pattern (${String((error as Error).message).replace(/\s+/g, ' ').replace(/\.$/, '')}).`,
      argument,
    );
  }
  return value;
}

/** Refuses a time zone that is not an IANA name the runtime knows. */
export function assertTimeZone(value: unknown, argument = 'timezone'): string {
  if (typeof value === 'string' && value.length > 0 && value.length <= 64) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: value });
      return value;
    } catch {
      // fall through to the error
    }
  }
  throw new InvalidArgumentError(`${argument} must be an IANA time zone such as "Europe/Berlin" or "UTC", got ${JSON.stringify(String(value)).slice(0, 80)}.`, argument);
}

/** The first fire time strictly after `after` (epoch ms), or null if the pattern never fires again. */
export function nextFireAfter(recurrence: Recurrence, after: number): number | null {
  if (recurrence.kind === 'interval') {
    const { intervalMs, anchorAt } = recurrence;
    if (after < anchorAt) return anchorAt;
    return anchorAt + (Math.floor((after - anchorAt) / intervalMs) + 1) * intervalMs;
  }
  const next = cronOf(recurrence.cron, recurrence.timezone).nextRun(new Date(after));
  return next ? next.getTime() : null;
}
