import { describe, expect, it } from '@jest/globals';
import { ShutdownBoundOracle, type SimEvent } from '../../lib/simulator/index.js';

const T0 = Date.UTC(2026, 0, 1);
const begun = (target: string, at = T0): SimEvent => ({ type: 'fault', at, kind: 'shutdown', target });
const stopped = (target: string, at: number): SimEvent => ({ type: 'stopped', at, target });

function violations(events: readonly SimEvent[], now: number): number {
  const oracle = new ShutdownBoundOracle(5_000);
  for (const event of events) oracle.onEvent(event);
  oracle.finish({ now, rows: [], drained: true });
  return oracle.report().violations;
}

describe('issue 19 item 3: the shutdown bound oracle', () => {
  it('accepts a stop that ends within its bound, even at the bound exactly', () => {
    expect(violations([begun('node0.0'), stopped('node0.0', T0 + 1_000), begun('node1.0'), stopped('node1.0', T0 + 5_000)], T0 + 60_000)).toBe(0);
  });

  it('counts a stop that ends late, and one that never ends', () => {
    expect(violations([begun('node0.0'), stopped('node0.0', T0 + 5_001)], T0 + 60_000)).toBe(1);
    expect(violations([begun('node0.0')], T0 + 60_000)).toBe(1);
  });

  it('leaves a stop still inside its bound when the run ends alone', () => {
    expect(violations([begun('node0.0', T0 + 58_000)], T0 + 60_000)).toBe(0);
  });
});
