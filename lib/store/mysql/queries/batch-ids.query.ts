import type { MysqlExecutor, MysqlStatement } from '../mysql-executor.js';
import type { MysqlNaming } from '../mysql-naming.js';

/**
 * Up to `limit` distinct batch ids, greatest (newest: they are UUIDv7) first, each less than
 * `before` when given: a loose index scan down jobs_batch_idx (migration 0023), one step per id,
 * each step one descent of the index to the greatest batch id below the last one found. A page so
 * costs `limit` descents however many jobs each batch holds, and however many jobs are in no batch.
 *
 * The steps are statements of one script (one round trip), chained through a session variable.
 * MariaDB cannot run the step as a correlated subquery of a recursive CTE: a bound taken from the
 * outer row is not used as a range on the index, so each step would walk the whole index. A
 * session variable is a constant to the optimizer, so `batch_id < @v ORDER BY batch_id DESC LIMIT 1`
 * is a range read that stops at its first row. The guard `@v IS NOT NULL` makes the steps after the
 * last batch read nothing ("Impossible WHERE"); the scalar subquery makes a step that finds no row
 * set the variable to NULL (a `SELECT … INTO` that returns no row would leave it as it was).
 */
export async function batchIds(db: MysqlExecutor, t: MysqlNaming, limit: number, before: string | null): Promise<string[]> {
  const statements: MysqlStatement[] = [
    before === null
      ? { sql: `SELECT MAX(batch_id) INTO @batch_page FROM ${t.jobs}` }
      : { sql: `SELECT MAX(batch_id) INTO @batch_page FROM ${t.jobs} WHERE batch_id < ?`, values: [before] },
    { sql: 'SELECT @batch_page AS id' },
  ];
  const step: MysqlStatement = {
    sql: `SELECT (SELECT batch_id FROM ${t.jobs} WHERE @batch_page IS NOT NULL AND batch_id < @batch_page ORDER BY batch_id DESC LIMIT 1) INTO @batch_page`,
  };
  for (let i = 1; i < limit; i++) statements.push(step, { sql: 'SELECT @batch_page AS id' });
  const results = await db.script(statements);
  const ids: string[] = [];
  for (let i = 1; i < results.length; i += 2) {
    const id = (results[i] as { id: string | null }[])[0]?.id ?? null;
    if (id === null) break;
    ids.push(id);
  }
  return ids;
}
