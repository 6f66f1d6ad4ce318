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
    compiled = new Cron(cron, { timezone, paused: true });
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

/** Why a tick produced no job. */
export type SkipReason = 'missed' | 'overlap';

export interface MintPolicy {
  /** `skip` drops ticks missed during downtime; `coalesce` runs them as one make-up job. */
  readonly catchUp: 'skip' | 'coalesce';
  /** Do not mint while the previous occurrence is still not terminal. */
  readonly noOverlap: boolean;
  /** A tick first seen more than this long after its fire time counts as missed. */
  readonly misfireGraceMs: number;
}

export interface MintPlan {
  /** The fire times to mint a job for, oldest first. */
  readonly mint: readonly number[];
  /** Ticks that got no job, and why; `count` may exceed the ticks listed when many were missed. */
  readonly skipped: { readonly count: number; readonly last: number | null; readonly reason: SkipReason | null };
  /** The next fire time after `now`, or null if the schedule never fires again. */
  readonly nextFireAt: number | null;
}

/** Most ticks one plan enumerates; older missed ticks are only counted. */
const MAX_TICKS = 1_000;

/**
 * Decides, purely, what a due schedule mints at `now`: the ticks from `nextFireAt` up to `now`,
 * split into those still within the misfire grace and those missed, then shaped by the catch-up
 * policy and `noOverlap`. `previousRunning` says whether the last minted occurrence is still not
 * terminal.
 */
export function planMint(recurrence: Recurrence, policy: MintPolicy, nextFireAt: number, now: number, previousRunning: boolean): MintPlan {
  const ticks: number[] = [];
  // Ticks missed long ago are counted, not enumerated (for cron, a lower bound).
  let missedEarlier = 0;
  let lastDue: number | null = null;
  let tick: number | null = nextFireAt;
  while (tick !== null && tick <= now) {
    if (ticks.length === MAX_TICKS) {
      const resume = nextFireAfter(recurrence, now - policy.misfireGraceMs - 1);
      const gap = recurrence.kind === 'interval' && resume !== null ? Math.max(0, Math.round((resume - lastDue!) / recurrence.intervalMs) - 1) : 0;
      missedEarlier += ticks.length + gap;
      ticks.length = 0;
      tick = resume;
      continue;
    }
    ticks.push(tick);
    lastDue = tick;
    tick = nextFireAfter(recurrence, tick);
  }
  const inGrace = ticks.filter((t) => now - t <= policy.misfireGraceMs);
  const missed = missedEarlier + ticks.length - inGrace.length;

  let mint: number[];
  let skipped: number;
  if (policy.catchUp === 'coalesce' && missed > 0) {
    // Everything due collapses into one make-up run, at the most recent tick.
    mint = [lastDue!];
    skipped = missed + inGrace.length - 1;
  } else {
    mint = inGrace;
    skipped = missed;
  }
  let reason: SkipReason | null = skipped > 0 ? 'missed' : null;
  if (policy.noOverlap && mint.length > 0 && (previousRunning || mint.length > 1)) {
    // Overlap with the previous occurrence, or with each other: keep at most the latest.
    const kept = previousRunning ? [] : [mint[mint.length - 1]!];
    skipped += mint.length - kept.length;
    reason = 'overlap';
    mint = kept;
  }
  const lastSkipped = skipped > 0 ? ([...ticks].reverse().find((t) => !mint.includes(t)) ?? lastDue) : null;
  return { mint, skipped: { count: skipped, last: lastSkipped, reason }, nextFireAt: nextFireAfter(recurrence, now) };
}
