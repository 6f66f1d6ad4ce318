import type { SeededRandom } from '../core/index.js';
import type { VirtualScheduler } from './virtual-scheduler.js';

/**
 * Runs `act` again and again on the simulated clock, each time after a pause drawn from 1 to
 * 2 × `meanMs` (so `meanMs` on average), for as long as `active()` holds. A `meanMs` of 0 or less
 * runs nothing. The fault injector and the operators draw their pauses this way.
 */
export function everyRandomly(scheduler: VirtualScheduler, random: SeededRandom, meanMs: number, active: () => boolean, act: () => void): void {
  if (meanMs <= 0) return;
  const next = () =>
    scheduler.at(1 + random.nextInt(2 * meanMs), () => {
      if (!active()) return;
      act();
      next();
    });
  next();
}
