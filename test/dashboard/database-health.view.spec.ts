import { describe, expect, it } from '@jest/globals';
import { databaseHealthView } from '../../lib/dashboard/pages/database-health.view.js';

// The overview's line on what holds back vacuum (issue 37), rendered from a StoreHealth.

const now = new Date('2026-12-04T12:00:00.000Z');
const health = { horizonXids: 41_822, deadJobRows: 160_000, liveJobRows: 12_000, lastVacuumAt: new Date(now.getTime() - 300_000) };

describe('databaseHealthView', () => {
  it('names a transaction open for a minute or more as holding back vacuum, with the dead rows it keeps', () => {
    const text = String(databaseHealthView({ ...health, oldestTransaction: { ageMs: 180_000, pid: 4242, state: 'idle in transaction' } }, now));
    expect(text).toBe(
      '<p id="database" data-live class="held">The oldest open transaction (pid 4242, idle in transaction) began 3 min ago; 41,822 transactions have begun since the oldest still running. ' +
        'Vacuum cannot remove the jobs rows it may still see, and every claim passes them. Jobs table: 160,000 dead rows beside 12,000 live, last vacuumed 5 min ago.</p>',
    );
  });

  it('states a younger transaction plainly, and says when none is seen', () => {
    expect(String(databaseHealthView({ ...health, oldestTransaction: { ageMs: 59_000, pid: 7, state: 'active' } }, now))).toMatch(/^<p id="database" data-live>The oldest open transaction \(pid 7, active\) began 59 s ago;/);
    expect(String(databaseHealthView({ ...health, oldestTransaction: null, lastVacuumAt: null }, now))).toBe(
      '<p id="database" data-live>No other open transaction holds back vacuum, or this role may not see it. Jobs table: 160,000 dead rows beside 12,000 live, last vacuumed never.</p>',
    );
  });

  it('escapes the state text, and renders nothing for a store that reports nothing', () => {
    expect(String(databaseHealthView({ ...health, oldestTransaction: { ageMs: 1_000, pid: 1, state: '<b>x</b>' } }, now))).toContain('&lt;b&gt;x&lt;/b&gt;');
    expect(String(databaseHealthView({ oldestTransaction: null, horizonXids: null, deadJobRows: null, liveJobRows: null, lastVacuumAt: null }, now))).toBe('');
  });
});
