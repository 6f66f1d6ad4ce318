import type { JobState } from '../../../core/index.js';
import type { StoredPlace } from '../../dependencies/sequence-enqueue.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

/**
 * The sequences' tails, under their row locks. `lock` takes each key's row (inserting it when the
 * key is new) in key order and returns its tail: an upsert's update waits for a concurrent enqueue
 * of the key to end, and then reads the tail that enqueue committed. The lock is held until the
 * enqueue's transaction ends, so enqueues of one key are appended one after the other. `places`
 * reads the tails (and the batch's caller-chosen ids) in a statement of its own, whose snapshot
 * comes after the lock's wait. `move` sets the tails once the batch's jobs are planned.
 */
export function sequenceTailQueries(t: PostgresNaming) {
  const lock = `INSERT INTO ${t.sequences} AS s (key) SELECT k FROM unnest($1::text[]) AS k ORDER BY k
    ON CONFLICT (key) DO UPDATE SET tail_id = s.tail_id
    RETURNING s.key, s.tail_id`;
  const places = `SELECT j.id, j.state, (SELECT 1 FROM ${t.dependencies} d WHERE d.child_id = j.id AND d.sequence IS NOT NULL AND NOT d.settled LIMIT 1) IS NOT NULL AS in_line
    FROM ${t.jobs} j WHERE j.id = ANY($1::uuid[])`;
  const move = `UPDATE ${t.sequences} s SET tail_id = v.tail FROM unnest($1::text[], $2::uuid[]) AS v(key, tail) WHERE s.key = v.key`;
  return {
    async lock(db: PgExecutor, keys: readonly string[]): Promise<Map<string, string | null>> {
      const rows = await db.query<{ key: string; tail_id: string | null }>(lock, [keys]);
      return new Map(rows.map((row) => [row.key, row.tail_id]));
    },
    async places(db: PgExecutor, ids: readonly string[]): Promise<Map<string, StoredPlace>> {
      const rows = await db.query<{ id: string; state: JobState; in_line: boolean }>(places, [ids]);
      return new Map(rows.map((row) => [row.id, { state: row.state, inLine: row.in_line }]));
    },
    async move(db: PgExecutor, tails: ReadonlyMap<string, string>): Promise<void> {
      if (tails.size > 0) await db.query(move, [[...tails.keys()], [...tails.values()]]);
    },
  };
}
