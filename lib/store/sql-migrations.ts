import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The newest migration the SQL stores ship (the in-memory store always reports it). */
export const LATEST_SCHEMA_VERSION = 27;

/** One numbered SQL file shipped with the package. */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/** The quoted names a migration's placeholders stand for. */
export interface MigrationNames {
  /** The qualified, quoted name of one of the store's tables (`jobs`, `queues`, `schedules`, ...). */
  table(name: string): string;
  /** Quotes the installation's prefix plus `name`, for an index or constraint. */
  local(name: string): string;
}

/** Reads `NNNN_name.sql` files from `dir`, in version order. */
export function loadMigrations(dir: string): Migration[] {
  return readdirSync(dir)
    .filter((file) => /^\d{4}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => ({ version: Number(file.slice(0, 4)), name: file.slice(5, -4), sql: readFileSync(join(dir, file), 'utf8') }));
}

/** Replaces `{{table}}` and `{{local:name}}` placeholders with the installation's quoted names. */
export function renderMigration(sql: string, names: MigrationNames): string {
  return sql.replace(/\{\{(local:)?([a-z0-9_]+)\}\}/g, (_match, local: string | undefined, name: string) =>
    local ? names.local(name) : names.table(name),
  );
}
