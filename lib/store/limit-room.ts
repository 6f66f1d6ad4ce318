/** The limit keys a job falls under: its queue's, and its concurrency key's when it has one. */
export function limitKeysOf(queue: string, concurrencyKey: string | null): string[] {
  return concurrencyKey === null ? [`queue:${queue}`] : [`queue:${queue}`, `key:${concurrencyKey}`];
}

/**
 * Picks candidates in claim order while every cap they fall under has room, counting each pick
 * against its caps. A candidate whose cap is full is passed over, not waited on, so it cannot
 * starve the jobs behind it. For stores with one writer, which can count running jobs exactly.
 */
export function pickWithinLimits<T>(
  candidates: Iterable<T>,
  keysOf: (candidate: T) => string[],
  max: ReadonlyMap<string, number>,
  running: Map<string, number>,
  limit: number,
): T[] {
  const picked: T[] = [];
  for (const candidate of candidates) {
    if (picked.length === limit) break;
    const capped = keysOf(candidate).filter((key) => max.has(key));
    if (capped.some((key) => (running.get(key) ?? 0) >= max.get(key)!)) continue;
    for (const key of capped) running.set(key, (running.get(key) ?? 0) + 1);
    picked.push(candidate);
  }
  return picked;
}
