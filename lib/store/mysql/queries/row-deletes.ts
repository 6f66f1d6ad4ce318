import type { MysqlExecutor } from '../mysql-executor.js';

/** Statements one round trip carries. */
const DELETES_PER_SCRIPT = 1_000;

/**
 * Deletes rows by their key, one `DELETE ... WHERE <key>` per row, sent a thousand to a round
 * trip; returns how many went. A DELETE that names many rows at once (`IN (...)`, a range) lets
 * the optimizer scan the table instead when they are much of it (a small table, or the count
 * changes a fold empties), and a scanning DELETE waits on every row another transaction holds,
 * such as a host transaction's uncommitted insert: READ COMMITTED's semi-consistent read, which
 * passes over them, serves UPDATE only. A lookup by the whole key never scans, so it touches only
 * the row it deletes.
 */
export async function deleteRows(db: MysqlExecutor, table: string, key: string, rows: readonly (readonly unknown[])[]): Promise<number> {
  let deleted = 0;
  for (let start = 0; start < rows.length; start += DELETES_PER_SCRIPT) {
    const some = rows.slice(start, start + DELETES_PER_SCRIPT);
    const results = (await db.script(some.map((values) => ({ sql: `DELETE FROM ${table} WHERE ${key}`, values })))) as { affectedRows: number }[];
    for (const result of results) deleted += result.affectedRows;
  }
  return deleted;
}
