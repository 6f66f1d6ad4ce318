import type { SeededRandom } from '../core/index.js';

/** An operator's change of a concurrency key's cap at one instant of the safety phase. */
export interface LimitChange {
  readonly atMs: number;
  readonly key: string;
  /** The new cap, or null to remove it. */
  readonly max: number | null;
}

/**
 * The operator's limit changes for a run: at seeded intervals around `everyMs`, a key's cap is set
 * to 1–4 (which lowers or raises it, or sets it again after a removal) or removed. They land while
 * that key's jobs run, which is the point: the jobs already running must count against the new cap.
 * They draw from a random stream of their own, so switching them off leaves the rest of a seed's run
 * unchanged.
 */
export function planLimitChanges(keys: readonly string[], safetyMs: number, everyMs: number, r: SeededRandom): LimitChange[] {
  const changes: LimitChange[] = [];
  if (everyMs <= 0 || keys.length === 0) return changes;
  for (let at = 1 + r.nextInt(2 * everyMs); at < safetyMs; at += 1 + r.nextInt(2 * everyMs)) {
    changes.push({ atMs: at, key: keys[r.nextInt(keys.length)]!, max: r.next() < 0.2 ? null : 1 + r.nextInt(4) });
  }
  return changes;
}
