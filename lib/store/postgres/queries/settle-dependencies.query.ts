import type { PgExecutor } from '../pg-executor.js';
import { settleFunction } from '../postgres-effects.js';
import type { PostgresNaming } from '../postgres-naming.js';

/**
 * The maintenance pass over dependency edges: settles up to `limit` open edges of terminal parents
 * that no outcome write settled, through the same function the effects trigger calls.
 */
export function settleDependenciesQuery(t: PostgresNaming) {
  const text = `SELECT ${settleFunction(t)}(NULL, $1) AS settled`;
  return async (db: PgExecutor, limit: number): Promise<number> => {
    const [row] = await db.query<{ settled: number }>(text, [limit]);
    return row!.settled;
  };
}
