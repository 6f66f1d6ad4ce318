import { describe, expect, it } from '@jest/globals';
import type { CheckedClaimParams } from '../../lib/store/checked/store-params.js';
import type { JobRow } from '../../lib/store/job-row.js';
import { ClaimCursors } from '../../lib/store/postgres/claim-cursor.js';

// When the unlimited PostgreSQL claim reads from a cursor, and from where (claim-cursor.ts). The
// claims themselves, under a held horizon, are in postgres-claim-cursor.spec.ts.

const due = (queues: string[] = ['default']): CheckedClaimParams => ({ workerId: 'w', limit: 32, leaseMs: 30_000, queues, includeLapsed: false });
const lapsed = (queues: string[] = ['default']): CheckedClaimParams => ({ ...due(queues), includeLapsed: true });
const T = Date.parse('2026-12-04T12:00:00.000Z');
const row = (priority: number, runAt: number): JobRow => ({ priority, runAt }) as JobRow;
const cursorOf = (cursors: ClaimCursors, params: CheckedClaimParams) => cursors.plan(params).cursor;

describe('ClaimCursors', () => {
  it('reads from the start until a claim searching lapsed leases walked more than a thousand entries past what it took', () => {
    const cursors = new ClaimCursors();
    cursors.observe(lapsed(), [row(0, T)], 1_001);
    expect(cursors.plan(due())).toEqual({ params: due() });
    cursors.observe(lapsed(), [row(0, T)], 1_002);
    expect(cursors.plan(due())).toEqual({ params: due(), cursor: { priorities: [0], runAts: [new Date(T - 250).toISOString()] } });
  });

  it('while walking, lets one in ten of the claims asked to search lapsed leases do so from the start, and reads the other nine from the cursor', () => {
    const cursors = new ClaimCursors();
    cursors.observe(lapsed(), [row(0, T)], 50_000);
    const plans = Array.from({ length: 20 }, () => cursors.plan(lapsed()));
    const full = plans.flatMap((plan, i) => (plan.cursor === undefined ? [i] : []));
    expect(full).toEqual([9, 19]);
    for (const [i, plan] of plans.entries()) expect(plan.params.includeLapsed).toBe(full.includes(i));
    // Claims between poll ticks always read from the cursor, and do not count toward the ten.
    expect(cursorOf(cursors, due())).toBeDefined();
  });

  it('lets only a claim that searched lapsed leases from the start end the walking', () => {
    const cursors = new ClaimCursors();
    cursors.observe(lapsed(), [row(0, T)], 50_000);
    // Other claims carry no count (null): they neither start nor end the walking.
    cursors.observe(due(), [row(0, T + 10)], null);
    expect(cursors.walking(['default'])).toBe(true);
    cursors.observe(lapsed(), [], 40);
    expect(cursors.walking(['default'])).toBe(false);
    expect(cursors.plan(lapsed())).toEqual({ params: lapsed() });
  });

  it('starts each priority 250 ms before the first job a claim took there, and never moves a cursor back', () => {
    const cursors = new ClaimCursors();
    cursors.observe(lapsed(), [row(5, T + 900), row(-3, T + 400), row(5, T + 700), row(-3, T + 600)], 10_000);
    expect(cursorOf(cursors, due())).toEqual({
      priorities: [-3, 5],
      runAts: [new Date(T + 150).toISOString(), new Date(T + 450).toISOString()],
    });
    // A job found behind the cursor (by the claim that reads from the start) does not pull it back.
    cursors.observe(lapsed(), [row(5, T - 60_000)], 10_000);
    expect(cursorOf(cursors, due())?.runAts[1]).toBe(new Date(T + 450).toISOString());
    // Claims between poll ticks move it on.
    cursors.observe(due(), [row(5, T + 5_000)], null);
    expect(cursorOf(cursors, due())?.runAts[1]).toBe(new Date(T + 4_750).toISOString());
  });

  it('keeps each queue list apart', () => {
    const cursors = new ClaimCursors();
    cursors.observe(lapsed(['a']), [row(0, T)], 10_000);
    expect(cursorOf(cursors, due(['a']))).toBeDefined();
    expect(cursorOf(cursors, due(['a', 'b']))).toBeUndefined();
    expect(cursorOf(cursors, due(['b']))).toBeUndefined();
  });

  it('reads from the start while walking if no claim took a job yet, since the cursor would list no priority', () => {
    const cursors = new ClaimCursors();
    cursors.observe(lapsed(), [], 10_000);
    expect(cursors.walking(['default'])).toBe(true);
    expect(cursors.plan(lapsed())).toEqual({ params: lapsed() });
  });
});
