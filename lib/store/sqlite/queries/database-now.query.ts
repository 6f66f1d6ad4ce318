import type { Database } from 'better-sqlite3';

/** The database's clock, in epoch ms: every instant the store writes comes from it. */
export function databaseNowQuery(db: Database) {
  const clock = db.prepare(`SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER) AS now`).pluck();
  return (): number => clock.get() as number;
}
