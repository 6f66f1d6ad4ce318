import type { Database } from 'better-sqlite3';
import type { JobRow } from '../../job-row.js';
import { uniqueKeyTakenError } from '../../unique/unique-plan.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import { HOLDING } from './unique-holding.sql.js';

/**
 * Refuses a replay that would give a job back a key another unfinished job holds. It runs inside
 * the replay's write transaction, so no other writer can take the key before the replay commits.
 */
export function uniqueReplayGuardQuery(db: Database, t: SqliteNaming) {
  const other = db.prepare(`SELECT id FROM ${t.jobs} WHERE name = ? AND unique_key = ? AND state IN ${HOLDING} AND id <> ?`).pluck();
  return (job: JobRow | null): void => {
    if (!job || job.uniqueKey === null || (job.state !== 'dead_lettered' && job.state !== 'quarantined')) return;
    const holderId = (other.get(job.name, job.uniqueKey, job.id) as string | undefined) ?? null;
    if (holderId !== null) throw uniqueKeyTakenError(job, job.uniqueKey, holderId);
  };
}
