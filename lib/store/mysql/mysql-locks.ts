import { createHash } from 'node:crypto';
import type { MysqlExecutor } from './mysql-executor.js';
import type { MysqlNaming } from './mysql-naming.js';

/** Rows per lock space: names hash into these, so the locks table stays small. */
export const LOCK_BUCKETS = 65_536;

/** The bucket a name locks in its space. */
export function lockBucket(name: string): number {
  return createHash('sha1').update(name).digest().readUInt32BE(0) % LOCK_BUCKETS;
}

/**
 * Locks `names` in `space` until `db`'s transaction ends, in bucket order, so two writers that
 * lock overlapping names never wait on each other in a cycle. The row is written if missing; a
 * present one is locked by the no-op update.
 */
export async function lockNames(db: MysqlExecutor, naming: MysqlNaming, space: string, names: Iterable<string>): Promise<void> {
  const buckets = [...new Set([...names].map(lockBucket))].sort((a, b) => a - b);
  if (buckets.length === 0) return;
  await db.run(
    `INSERT INTO ${naming.locks} (space, bucket) VALUES ${buckets.map(() => '(?, ?)').join(', ')} ON DUPLICATE KEY UPDATE bucket = bucket`,
    buckets.flatMap((bucket) => [space, bucket]),
  );
}
