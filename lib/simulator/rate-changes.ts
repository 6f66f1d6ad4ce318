import type { SeededRandom } from '../core/index.js';
import type { Rate } from '../store/index.js';
import { planKeyChanges } from './limit-changes.js';
import { SIM_RATE_MAX_PER_MS } from './sim-settings.js';

/** An operator's change of a concurrency key's rate limit at one instant of the safety phase. */
export interface RateChange {
  readonly atMs: number;
  readonly key: string;
  /** The new rate, or null to remove it. */
  readonly rate: Rate | null;
}

/**
 * The operator's rate-limit changes for a run: at seeded intervals around `everyMs`, a key's rate
 * is set to 1–4 starts per 250 ms to 2 s (which raises or lowers its max, changes its window, or
 * sets a new one after a removal) or removed. They draw from a random stream of their own, so
 * switching them off leaves the rest of a seed's run unchanged.
 */
export function planRateChanges(keys: readonly string[], safetyMs: number, everyMs: number, r: SeededRandom): RateChange[] {
  const draw = (): Rate | null => (r.next() < 0.2 ? null : { max: 1 + r.nextInt(4), perMs: 250 * (1 + r.nextInt(SIM_RATE_MAX_PER_MS / 250)) });
  return planKeyChanges(keys, safetyMs, everyMs, r, draw).map(({ atMs, key, value }) => ({ atMs, key, rate: value }));
}
