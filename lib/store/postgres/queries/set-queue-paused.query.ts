import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

/** Pauses or resumes a queue; a queue needs no row until it is first paused. */
export function setQueuePausedQuery(t: PostgresNaming) {
  const text = `
    INSERT INTO ${t.queues} (name, paused, updated_at) VALUES ($1, $2, now())
    ON CONFLICT (name) DO UPDATE SET paused = EXCLUDED.paused, updated_at = now()`;
  return async (db: PgExecutor, queue: string, paused: boolean): Promise<void> => {
    await db.query(text, [queue, paused]);
  };
}
