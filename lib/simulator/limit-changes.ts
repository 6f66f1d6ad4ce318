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
  return planKeyChanges(keys, safetyMs, everyMs, r, () => (r.next() < 0.2 ? null : 1 + r.nextInt(4))).map(({ atMs, key, value }) => ({ atMs, key, max: value }));
}

/**
 * Operator changes of keys at seeded intervals around `everyMs` through the safety phase: at each,
 * a key drawn from `keys`, then its new value from `draw` (which draws from the same stream).
 */
export function planKeyChanges<T>(keys: readonly string[], safetyMs: number, everyMs: number, r: SeededRandom, draw: () => T): { atMs: number; key: string; value: T }[] {
  const changes: { atMs: number; key: string; value: T }[] = [];
  if (everyMs <= 0 || keys.length === 0) return changes;
  for (let at = 1 + r.nextInt(2 * everyMs); at < safetyMs; at += 1 + r.nextInt(2 * everyMs)) {
    const key = keys[r.nextInt(keys.length)]!;
    changes.push({ atMs: at, key, value: draw() });
  }
  return changes;
}
