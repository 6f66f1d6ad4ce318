import type { JobState } from '../../../core/index.js';
import type { MysqlExecutor, MysqlStatement } from '../mysql-executor.js';
import type { MysqlNaming } from '../mysql-naming.js';

// What an enqueue reads under its locks before it plans: its parents, and its sequences' tails.

/**
 * A parent as an enqueue reads it: its state, and for a batch with sequences whether it is still in
 * line in its own sequence (its sequence edge open), which keeps a job after it waiting even once
 * it ended (dependency-plan.ts).
 */
export interface ParentState {
  readonly state: JobState;
  readonly inLine: boolean;
}

export type ParentRow = { id: string; state: JobState; in_line?: number };

/** The read of parents `ids`; whether each is in line only for a batch with sequences, the only ones that ask. */
export function parentsStatement(t: MysqlNaming, ids: readonly string[], sequenced: boolean): MysqlStatement {
  const inLine = sequenced ? `, EXISTS (SELECT 1 FROM ${t.dependencies} i WHERE i.child_id = j.id AND i.sequence IS NOT NULL AND i.settled = FALSE) AS in_line` : '';
  return { sql: `SELECT j.id, j.state${inLine} FROM ${t.jobs} j WHERE j.id IN (?)`, values: [ids] };
}

export function parentsOf(rows: readonly ParentRow[]): Map<string, ParentState> {
  return new Map(rows.map((r) => [r.id, { state: r.state, inLine: Number(r.in_line ?? 0) === 1 }]));
}

/** The parents as `db` sees them: on a session of the store's own, as last committed. */
export async function readParents(db: MysqlExecutor, t: MysqlNaming, ids: readonly string[], sequenced: boolean): Promise<Map<string, ParentState>> {
  const { sql, values } = parentsStatement(t, ids, sequenced);
  return parentsOf(await db.query<ParentRow>(sql, values));
}

/**
 * Locks each sequence key's row until the transaction ends, in key order, inserting it when the key
 * is new, and returns its tail (null for a new key). The upsert waits for a concurrent enqueue of
 * the key to end, and the locking read then sees the tail that one committed, whatever the
 * transaction's snapshot.
 */
export async function lockSequences(db: MysqlExecutor, t: MysqlNaming, keys: readonly string[]): Promise<Map<string, string | null>> {
  const [, rows] = (await db.script([
    { sql: `INSERT INTO ${t.sequences} (\`key\`) VALUES ${keys.map(() => '(?)').join(', ')} ON DUPLICATE KEY UPDATE tail_id = tail_id`, values: keys },
    { sql: `SELECT \`key\`, tail_id FROM ${t.sequences} WHERE \`key\` IN (?) FOR UPDATE`, values: [keys] },
  ])) as [unknown, { key: string; tail_id: string | null }[]];
  return new Map(rows.map((r) => [r.key, r.tail_id]));
}
