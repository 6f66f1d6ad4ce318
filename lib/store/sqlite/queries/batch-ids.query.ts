import type { Database } from 'better-sqlite3';
import type { SqliteNaming } from '../sqlite-naming.js';

/**
 * Up to `limit` distinct batch ids, greatest (newest: they are UUIDv7) first, each less than
 * `before` when given. A loose index scan down jobs_batch_idx (migration 0023): each step reads the
 * greatest batch id below the last one found, one descent of the index, so a page costs `limit`
 * descents however many jobs each batch holds, and however many jobs are in no batch.
 */
export function batchIdsQuery(db: Database, t: SqliteNaming) {
  const below = (bound: string) => `(SELECT batch_id FROM ${t.jobs} WHERE batch_id < ${bound} ORDER BY batch_id DESC LIMIT 1)`;
  const walk = (first: string) =>
    db
      .prepare(
        `WITH RECURSIVE batches (id, n) AS (
           SELECT ${first}, 1
           UNION ALL
           SELECT ${below('b.id')}, b.n + 1 FROM batches b WHERE b.id IS NOT NULL AND b.n < @limit
         )
         SELECT id FROM batches WHERE id IS NOT NULL ORDER BY n`,
      )
      .pluck();
  const newest = walk(`(SELECT batch_id FROM ${t.jobs} WHERE batch_id IS NOT NULL ORDER BY batch_id DESC LIMIT 1)`);
  const older = walk(below('@before'));
  return (limit: number, before: string | null): string[] =>
    (before === null ? newest.all({ limit }) : older.all({ limit, before })) as string[];
}
