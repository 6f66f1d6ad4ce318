import { isDeadLetterState, type JobState } from '../../../core/index.js';
import { sequenceWentOnError } from '../../dependencies/sequence-chain.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

/**
 * Refuses the replay of a failed sequence job that a later job of its key ran past (see
 * sequenceWentOnError). It first takes the key's row lock, as an enqueue of the key does, so no such
 * job can be planned behind the failed one while the replay commits; the check that follows is a
 * statement of its own, whose snapshot comes after that lock's wait.
 */
export function sequenceReplayGuardQuery(t: PostgresNaming) {
  const lock = `SELECT s.key FROM ${t.sequences} s JOIN ${t.jobs} j ON s.key = j.sequence_key WHERE j.id = $1 FOR UPDATE OF s`;
  const passed = `SELECT j.state, j.sequence_key,
      (SELECT 1 FROM ${t.dependencies} d WHERE d.parent_id = j.id AND d.sequence IS NOT NULL AND d.settled LIMIT 1) IS NOT NULL AS passed
    FROM ${t.jobs} j WHERE j.id = $1`;
  return async (db: PgExecutor, jobId: string): Promise<void> => {
    if ((await db.query(lock, [jobId])).length === 0) return;
    const [row] = await db.query<{ state: JobState; sequence_key: string; passed: boolean }>(passed, [jobId]);
    if (row && row.passed && isDeadLetterState(row.state)) throw sequenceWentOnError({ id: jobId, state: row.state }, row.sequence_key);
  };
}
