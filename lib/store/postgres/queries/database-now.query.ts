import type { PgExecutor } from '../pg-executor.js';

/** The database's clock, in epoch ms: every instant the store decides by comes from it. */
export function databaseNowQuery() {
  const text = `SELECT (extract(epoch from now()) * 1000)::bigint AS now`;
  return async (db: PgExecutor): Promise<number> => {
    const [{ now }] = await db.query<{ now: string }>(text);
    return Number(now);
  };
}
