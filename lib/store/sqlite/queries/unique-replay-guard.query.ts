import type { Database } from 'better-sqlite3';
import type { JobRow } from '../../job-row.js';
import { debounceKeyTakenError, replayGuarded, uniqueKeyTakenError } from '../../unique/unique-plan.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import { HOLDING } from './unique-holding.sql.js';

/**
 * Refuses a replay that would give a job back a key another unfinished job holds, or make a
 * debounced job take its key's enqueues while another job that has not started takes them. It runs
 * inside the replay's write transaction, so no other writer can take the key before the replay commits.
 */
export function uniqueReplayGuardQuery(db: Database, t: SqliteNaming) {
  const other = db.prepare(`SELECT id FROM ${t.jobs} WHERE name = ? AND unique_key = ? AND state IN ${HOLDING} AND id <> ?`).pluck();
  const debouncing = db
    .prepare(`SELECT id FROM ${t.jobs} WHERE name = ? AND window_key = ? AND window_kind = 'debounce' AND state = 'scheduled' AND attempt = 0 AND id <> ?`)
    .pluck();
  return (job: JobRow | null): void => {
    if (!job || !replayGuarded(job.state)) return;
    if (job.uniqueKey !== null) {
      const holderId = (other.get(job.name, job.uniqueKey, job.id) as string | undefined) ?? null;
      if (holderId !== null) throw uniqueKeyTakenError(job, job.uniqueKey, holderId);
    }
    if (job.windowKind === 'debounce') {
      const holderId = (debouncing.get(job.name, job.windowKey, job.id) as string | undefined) ?? null;
      if (holderId !== null) throw debounceKeyTakenError(job, job.windowKey!, holderId);
    }
  };
}
