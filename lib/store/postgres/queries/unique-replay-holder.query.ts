import type { JobState } from '../../../core/index.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { DEBOUNCE_HOLDER, HOLDING, uniqueLockSpace } from './unique-lock.sql.js';

/**
 * Before a replay: locks the job's unique key or debounce key, if it has one, and returns the job
 * with the id of another job that holds the key now (another unfinished job for a unique key,
 * another job that has not started for a debounce key), or null when the key is free or the job
 * has none. The lock is the one an enqueue of the key takes.
 */
export function uniqueReplayHolderQuery(t: PostgresNaming) {
  const space = uniqueLockSpace(t);
  const lockJob = `
    SELECT j.name, COALESCE(j.unique_key, j.window_key) AS key, j.unique_key IS NULL AS debounce, j.state,
      pg_advisory_xact_lock(hashtext($2), hashtext(CASE WHEN j.unique_key IS NOT NULL THEN jsonb_build_array(j.name, j.unique_key)
        ELSE jsonb_build_array('debounce', j.name, j.window_key) END::text)) IS NULL AS locked
    FROM ${t.jobs} j WHERE j.id = $1 AND (j.unique_key IS NOT NULL OR j.window_kind = 'debounce')`;
  const otherHolder = `SELECT id FROM ${t.jobs} WHERE name = $1 AND unique_key = $2 AND state IN ${HOLDING} AND id <> $3 LIMIT 1`;
  const otherDebounce = `SELECT j.id FROM ${t.jobs} j WHERE j.name = $1 AND j.window_key = $2 AND ${DEBOUNCE_HOLDER} AND j.id <> $3 LIMIT 1`;

  return async (db: PgExecutor, jobId: string) => {
    const [keyed] = await db.query<{ name: string; key: string; debounce: boolean; state: JobState }>(lockJob, [jobId, space]);
    if (!keyed) return null;
    const [other] = await db.query<{ id: string }>(keyed.debounce ? otherDebounce : otherHolder, [keyed.name, keyed.key, jobId]);
    return other ? { job: { id: jobId, name: keyed.name, state: keyed.state }, key: keyed.key, debounce: keyed.debounce, holderId: other.id } : null;
  };
}
