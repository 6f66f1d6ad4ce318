/**
 * `items` in runs of at most `size`, for statements that name rows in an `IN (?)` list: mysql2
 * spells the list out in the statement's text, which must stay within the server's
 * max_allowed_packet (16 MB by default on MariaDB), and a shorter list keeps the range optimizer
 * on its index.
 */
export function* inChunks<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let start = 0; start < items.length; start += size) yield items.slice(start, start + size);
}
