import { describe, expect, it } from '@jest/globals';
import { Cron } from 'croner';
import { assertCron, assertTimeZone, InvalidArgumentError, nextFireAfter, planMint, type Recurrence } from '../../lib/core/index.js';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The fire times of a recurrence in [from, to). */
function firesBetween(recurrence: Recurrence, from: string, to: string): string[] {
  const out: string[] = [];
  for (let t = nextFireAfter(recurrence, at(from) - 1); t !== null && t < at(to); t = nextFireAfter(recurrence, t)) out.push(iso(t)!);
  return out;
}

const cron = (pattern: string, timezone: string): Recurrence => ({ kind: 'cron', cron: pattern, timezone });

describe('cron across daylight saving time', () => {
  it('Europe/Berlin spring forward (2026-03-29): 02:30 does not exist and runs when the gap ends, at 03:00 CEST', () => {
    expect(firesBetween(cron('30 2 * * *', 'Europe/Berlin'), '2026-03-28T00:00:00Z', '2026-03-31T00:00:00Z')).toEqual([
      '2026-03-28T01:30:00.000Z', // 02:30 CET
      '2026-03-29T01:00:00.000Z', // 03:00 CEST: the end of the gap
      '2026-03-30T00:30:00.000Z', // 02:30 CEST
    ]);
    // The day has 23 hours, so an hourly pattern runs 23 times.
    expect(firesBetween(cron('0 * * * *', 'Europe/Berlin'), '2026-03-28T23:00:00Z', '2026-03-29T22:00:00Z')).toHaveLength(23);
  });

  it('Europe/Berlin fall back (2026-10-25): 02:30 happens twice and runs once; the hourly pattern runs 25 times', () => {
    expect(firesBetween(cron('30 2 * * *', 'Europe/Berlin'), '2026-10-24T00:00:00Z', '2026-10-27T00:00:00Z')).toEqual([
      '2026-10-24T00:30:00.000Z', // 02:30 CEST
      '2026-10-25T00:30:00.000Z', // the first 02:30 (CEST); the second (CET, 01:30Z) does not run
      '2026-10-26T01:30:00.000Z', // 02:30 CET
    ]);
    const hourly = firesBetween(cron('0 * * * *', 'Europe/Berlin'), '2026-10-24T22:00:00Z', '2026-10-25T23:00:00Z');
    expect(hourly).toHaveLength(25);
    expect(hourly).toContain('2026-10-25T00:00:00.000Z'); // 02:00 CEST
    expect(hourly).toContain('2026-10-25T01:00:00.000Z'); // 02:00 CET
  });

  it('America/New_York spring forward (2026-03-08): 02:30 runs at 03:00 EDT', () => {
    expect(firesBetween(cron('30 2 * * *', 'America/New_York'), '2026-03-07T00:00:00Z', '2026-03-10T00:00:00Z')).toEqual([
      '2026-03-07T07:30:00.000Z',
      '2026-03-08T07:00:00.000Z',
      '2026-03-09T06:30:00.000Z',
    ]);
  });

  it('America/New_York fall back (2026-11-01): 01:30 runs once; every half hour runs at each real half hour', () => {
    expect(firesBetween(cron('30 1 * * *', 'America/New_York'), '2026-10-31T00:00:00Z', '2026-11-03T00:00:00Z')).toEqual([
      '2026-10-31T05:30:00.000Z',
      '2026-11-01T05:30:00.000Z', // 01:30 EDT; 01:30 EST (06:30Z) does not run
      '2026-11-02T06:30:00.000Z',
    ]);
    expect(firesBetween(cron('*/30 * * * *', 'America/New_York'), '2026-11-01T04:50:00Z', '2026-11-01T07:10:00Z')).toEqual([
      '2026-11-01T05:00:00.000Z', // 01:00 EDT
      '2026-11-01T05:30:00.000Z', // 01:30 EDT
      '2026-11-01T06:00:00.000Z', // 01:00 EST
      '2026-11-01T06:30:00.000Z', // 01:30 EST
      '2026-11-01T07:00:00.000Z',
    ]);
  });

  it('uses UTC as given, and a seconds field when the pattern has six parts', () => {
    expect(iso(nextFireAfter(cron('0 9 * * *', 'UTC'), at('2026-06-01T09:00:00Z')))).toBe('2026-06-02T09:00:00.000Z');
    expect(iso(nextFireAfter(cron('*/10 * * * * *', 'UTC'), at('2026-06-01T09:00:00.500Z')))).toBe('2026-06-01T09:00:10.000Z');
  });
});

describe('cron in UTC', () => {
  it('gives exactly the ticks croner gives for the UTC zone (it is computed as a fixed zero offset)', () => {
    const patterns = ['* * * * * *', '*/7 * * * * *', '0 * * * *', '30 2 * * *', '0 9 * * 1-5', '0 0 29 2 *', '0 9 L * *', '0 0 1 1 *'];
    for (const pattern of patterns) {
      const zoned = new Cron(pattern, { timezone: 'UTC', paused: true });
      for (let i = 0; i < 40; i++) {
        const after = at('1999-12-31T23:59:59.500Z') + i * 7_919_683_237;
        expect({ pattern, after, next: nextFireAfter(cron(pattern, 'UTC'), after) }).toEqual({ pattern, after, next: zoned.nextRun(new Date(after))?.getTime() ?? null });
      }
    }
  });
});

describe('intervals', () => {
  const every = (intervalMs: number, anchorAt: number): Recurrence => ({ kind: 'interval', intervalMs, anchorAt });
  it('fires at anchor + k × interval, strictly after the given instant', () => {
    expect(nextFireAfter(every(1_000, 10_000), 0)).toBe(10_000);
    expect(nextFireAfter(every(1_000, 10_000), 10_000)).toBe(11_000);
    expect(nextFireAfter(every(1_000, 10_000), 10_999)).toBe(11_000);
    expect(nextFireAfter(every(60_000, 0), 3_600_000)).toBe(3_660_000);
  });
});

describe('planMint', () => {
  const everyMinute: Recurrence = { kind: 'interval', intervalMs: 60_000, anchorAt: 0 };
  const policy = { catchUp: 'skip' as const, noOverlap: false, misfireGraceMs: 60_000 };

  it('mints the tick that just came due, and moves on to the next', () => {
    expect(planMint(everyMinute, policy, 600_000, 600_500, false)).toEqual({
      mint: [600_000],
      skipped: { count: 0, last: null, reason: null },
      nextFireAt: 660_000,
    });
  });

  it('with skip, drops ticks missed during downtime and records them', () => {
    // Down from 10:00 to 10:30: ticks 10:00..10:30; only the last two are within a minute's grace.
    const plan = planMint(everyMinute, policy, 600_000, 2_400_000, false);
    expect(plan.mint).toEqual([2_340_000, 2_400_000]);
    expect(plan.skipped).toEqual({ count: 29, last: 2_280_000, reason: 'missed' });
    expect(plan.nextFireAt).toBe(2_460_000);
  });

  it('with coalesce, runs everything missed as exactly one make-up job at the latest tick', () => {
    const plan = planMint(everyMinute, { ...policy, catchUp: 'coalesce' }, 600_000, 2_400_000, false);
    expect(plan.mint).toEqual([2_400_000]);
    expect(plan.skipped.count).toBe(30);
    // Without anything missed, coalesce behaves like skip.
    expect(planMint(everyMinute, { ...policy, catchUp: 'coalesce' }, 600_000, 600_010, false).mint).toEqual([600_000]);
  });

  it('with noOverlap, mints nothing while the previous occurrence runs, and records the skipped tick', () => {
    const plan = planMint(everyMinute, { ...policy, noOverlap: true }, 600_000, 600_100, true);
    expect(plan).toEqual({ mint: [], skipped: { count: 1, last: 600_000, reason: 'overlap' }, nextFireAt: 660_000 });
    expect(planMint(everyMinute, { ...policy, noOverlap: true }, 600_000, 600_100, false).mint).toEqual([600_000]);
    // Never several at once: they would overlap each other.
    expect(planMint(everyMinute, { ...policy, noOverlap: true, misfireGraceMs: 600_000 }, 600_000, 780_000, false)).toMatchObject({
      mint: [780_000],
      skipped: { count: 3, reason: 'overlap' },
    });
  });

  it('stays cheap far behind: counts ticks it will never mint instead of listing them', () => {
    const everySecond: Recurrence = { kind: 'interval', intervalMs: 1_000, anchorAt: 0 };
    const plan = planMint(everySecond, { ...policy, misfireGraceMs: 5_000 }, 1_000, 86_400_000, false);
    expect(plan.mint).toEqual([86_395_000, 86_396_000, 86_397_000, 86_398_000, 86_399_000, 86_400_000]);
    expect(plan.skipped.count).toBe(86_400_000 / 1_000 - 6);
  });
});

describe('validation', () => {
  it.each(['61 * * * *', 'not a cron', '', '* * *'])('refuses the cron pattern %j', (pattern) => {
    expect(() => assertCron(pattern)).toThrow(InvalidArgumentError);
    expect(() => assertCron(pattern)).toThrow(/^cron .*(is not a valid cron pattern|must be a cron pattern).*\.$/);
  });

  it.each(['Mars/Olympus', 'CEST+2', '', 'Europe/Berlin; drop'])('refuses the time zone %j', (zone) => {
    expect(() => assertTimeZone(zone)).toThrow(/^timezone must be an IANA time zone such as "Europe\/Berlin" or "UTC", got .*\.$/);
  });

  it('accepts real patterns and zones', () => {
    expect(assertCron('0 9 * * 1-5')).toBe('0 9 * * 1-5');
    expect(assertTimeZone('America/New_York')).toBe('America/New_York');
  });
});
