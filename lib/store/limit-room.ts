/** The limit keys a job falls under: its queue's, and its concurrency key's when it has one. */
export function limitKeysOf(queue: string, concurrencyKey: string | null): string[] {
  return concurrencyKey === null ? [`queue:${queue}`] : [`queue:${queue}`, `key:${concurrencyKey}`];
}

/**
 * Picks candidates in claim order while every cap they fall under has room, counting each pick
 * against its caps. A candidate whose cap is full is passed over, not waited on, so it cannot
 * starve the jobs behind it; so is one whose rate limit has no free start left in its window.
 * `held` is told of each candidate passed over before the batch filled, with the first of its
 * limit keys that had no room (its key's before its queue's). For stores with one writer, which
 * can count running jobs exactly.
 */
export function pickWithinLimits<T>(
  candidates: Iterable<T>,
  keysOf: (candidate: T) => string[],
  max: ReadonlyMap<string, number>,
  running: Map<string, number>,
  limit: number,
  /** Free starts per rate-limited key: a candidate needs one of each of its keys', and takes it. */
  rateRoom: Map<string, number> = new Map(),
  held: (candidate: T, key: string) => void = () => {},
): T[] {
  const picked: T[] = [];
  for (const candidate of candidates) {
    if (picked.length === limit) break;
    const keys = keysOf(candidate);
    const capped = keys.filter((key) => max.has(key));
    const rated = keys.filter((key) => rateRoom.has(key));
    const full = [...capped.filter((key) => (running.get(key) ?? 0) >= max.get(key)!), ...rated.filter((key) => rateRoom.get(key)! <= 0)];
    if (full.length > 0) {
      held(candidate, full.sort((a, b) => Number(a.startsWith('queue:')) - Number(b.startsWith('queue:')))[0]!);
      continue;
    }
    for (const key of capped) running.set(key, (running.get(key) ?? 0) + 1);
    for (const key of rated) rateRoom.set(key, rateRoom.get(key)! - 1);
    picked.push(candidate);
  }
  return picked;
}
