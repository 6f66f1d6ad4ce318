import type { JobState } from '../../../core/index.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

/** The current states of the jobs among `ids` that exist (the parents an enqueue names, a schedule's last jobs). */
export function jobStatesQuery(t: PostgresNaming) {
  const text = `SELECT id, state FROM ${t.jobs} WHERE id = ANY($1::uuid[])`;
  return async (db: PgExecutor, ids: readonly string[]) =>
    new Map((await db.query<{ id: string; state: JobState }>(text, [ids])).map((r) => [r.id, r.state] as const));
}
