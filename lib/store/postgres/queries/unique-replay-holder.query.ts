import type { JobState } from '../../../core/index.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { HOLDING, uniqueLockSpace } from './unique-lock.sql.js';

/**
 * Before a replay: locks the job's key, if it has one, and returns the job with the id of
 * another unfinished job that holds the key now (null when the key is free or the job has none).
 */
export function uniqueReplayHolderQuery(t: PostgresNaming) {
  const space = uniqueLockSpace(t);
  const lockJob = `
    SELECT j.name, j.unique_key, j.state, pg_advisory_xact_lock(hashtext($2), hashtext(jsonb_build_array(j.name, j.unique_key)::text)) IS NULL AS locked
    FROM ${t.jobs} j WHERE j.id = $1 AND j.unique_key IS NOT NULL`;
  const otherHolder = `SELECT id FROM ${t.jobs} WHERE name = $1 AND unique_key = $2 AND state IN ${HOLDING} AND id <> $3 LIMIT 1`;

  return async (db: PgExecutor, jobId: string) => {
    const [keyed] = await db.query<{ name: string; unique_key: string; state: JobState }>(lockJob, [jobId, space]);
    if (!keyed) return null;
    const [other] = await db.query<{ id: string }>(otherHolder, [keyed.name, keyed.unique_key, jobId]);
    return other ? { job: { id: jobId, name: keyed.name, state: keyed.state }, key: keyed.unique_key, holderId: other.id } : null;
  };
}
