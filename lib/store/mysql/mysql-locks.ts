import { createHash } from 'node:crypto';
import type { MysqlExecutor, MysqlStatement } from './mysql-executor.js';
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

/** Rows of the parent guard (pre-written by the migration, so a shared lock always finds its row). */
export const PARENT_GUARD_BUCKETS = 4_096;

/** The guard row a job's id maps to. */
export function guardBucket(jobId: string): number {
  return lockBucket(jobId) % PARENT_GUARD_BUCKETS;
}

/**
 * The parent guard, MySQL's stand-in for PostgreSQL's FOR KEY SHARE: an enqueue that adds an edge
 * to a parent holds the parent's guard row shared until its transaction ends, and every write that
 * can end a job (or bring one back) holds its guard exclusive before it reads the job's open edges.
 * So the write waits for the enqueue and then settles its new edge, or the enqueue waits for the
 * write and then finds the parent ended. Guarding a row of its own, not the job's row, leaves the
 * job free for its heartbeats and its claim meanwhile. Ids share the 4,096 rows, so two jobs that
 * share one only take turns.
 */
export function parentGuard(t: MysqlNaming, jobIds: readonly string[], mode: 'shared' | 'exclusive'): MysqlStatement[] {
  if (jobIds.length === 0) return [];
  const buckets = [...new Set(jobIds.map(guardBucket))].sort((a, b) => a - b);
  return [{ sql: `SELECT bucket FROM ${t.locks} WHERE space = 'parent' AND bucket IN (?) ORDER BY bucket ${mode === 'shared' ? 'LOCK IN SHARE MODE' : 'FOR UPDATE'}`, values: [buckets] }];
}
