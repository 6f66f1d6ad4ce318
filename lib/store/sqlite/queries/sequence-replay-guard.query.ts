import type { Database } from 'better-sqlite3';
import { isDeadLetterState } from '../../../core/index.js';
import { sequenceWentOnError } from '../../dependencies/sequence-chain.js';
import type { JobRow } from '../../job-row.js';
import type { SqliteNaming } from '../sqlite-naming.js';

/**
 * Refuses the replay of a failed sequence job that a later job of its key ran past (see
 * sequenceWentOnError). Inside the replay's write transaction, so no enqueue of the key comes between.
 */
export function sequenceReplayGuardQuery(db: Database, t: SqliteNaming) {
  const passed = db.prepare(`SELECT 1 FROM ${t.dependencies} WHERE parent_id = ? AND sequence IS NOT NULL AND settled = 1 LIMIT 1`).pluck();
  return (job: JobRow | null): void => {
    if (job?.sequenceKey != null && isDeadLetterState(job.state) && passed.get(job.id) !== undefined) throw sequenceWentOnError(job, job.sequenceKey);
  };
}
