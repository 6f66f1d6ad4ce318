import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

/** The newest migration applied, or null before the first migrate (no migrations table yet). */
export function schemaVersionQuery(t: PostgresNaming) {
  const exists = `SELECT to_regclass($1)::text AS exists`;
  const latest = `SELECT max(version) AS version FROM ${t.migrations}`;
  return async (db: PgExecutor): Promise<number | null> => {
    const [row] = await db.query<{ exists: string | null }>(exists, [t.migrations]);
    if (!row?.exists) return null;
    const [version] = await db.query<{ version: number | null }>(latest);
    return version?.version ?? null;
  };
}
