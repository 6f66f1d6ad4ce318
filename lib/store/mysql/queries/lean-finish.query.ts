import type { NormalizedOutcome } from '../../checked/store-params.js';
import type { LockedJob } from '../mysql-effects.js';
import type { MysqlExecutor } from '../mysql-executor.js';
import type { MysqlNaming } from '../mysql-naming.js';

/**
 * Of a write's successes, the jobs the lean finish may delete (docs/stores.md#lean-finish): no
 * output (or JSON null), no unique key, throttle window or sequence (the job may be its sequence's
 * tail; retention deletes it with that row), no dependant (any edge, settled or not), and no observer
 * whose filter matches the job's name that hears `succeeded` or has yet to be fed one of its
 * entries in a state it hears. Read inside the outcome write, after its locking read, so the jobs
 * it judges are the ones it writes.
 */
export async function leanSuccesses(db: MysqlExecutor, t: MysqlNaming, outcomes: readonly NormalizedOutcome[], jobs: ReadonlyMap<string, LockedJob>): Promise<Set<string>> {
  const candidates = outcomes
    .filter((o) => o.kind === 'succeeded' && (o.output === null || o.output === 'null'))
    .map((o) => jobs.get(o.jobId)?.row)
    .filter((row) => row !== undefined && row.uniqueKey === null && row.windowKind !== 'throttle' && row.sequenceKey === null);
  if (candidates.length === 0) return new Set();
  const ids = candidates.map((row) => row!.id);
  const [parents, cursors] = (await db.script([
    { sql: `SELECT DISTINCT parent_id AS id FROM ${t.dependencies} WHERE parent_id IN (?)`, values: [ids] },
    { sql: `SELECT last_id, states, jobs FROM ${t.cursors}` },
  ])) as [{ id: string }[], { last_id: number; states: string | null; jobs: string | null }[]];
  const lean = new Set(ids);
  for (const parent of parents) lean.delete(parent.id);
  for (const cursor of cursors) {
    const names = cursor.jobs === null ? null : (JSON.parse(cursor.jobs) as string[]);
    const hears = cursor.states === null ? null : (JSON.parse(cursor.states) as string[]);
    const matching = candidates.filter((row) => lean.has(row!.id) && (names === null || names.includes(row!.name)));
    if (matching.length === 0) continue;
    if (hears === null || hears.includes('succeeded')) {
      for (const row of matching) lean.delete(row!.id);
      continue;
    }
    const unfed = await db.query<{ job_id: string }>(
      `SELECT DISTINCT job_id FROM ${t.history} WHERE job_id IN (?) AND state IN (?) AND (pos IS NULL OR pos > ?)`,
      [matching.map((row) => row!.id), hears, cursor.last_id],
    );
    for (const row of unfed) lean.delete(row.job_id);
  }
  return lean;
}
