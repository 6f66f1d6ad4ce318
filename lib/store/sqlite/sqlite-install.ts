import type { HistoryPolicy } from '../../core/index.js';
import type { SqlInstall } from '../sql-install.js';
import { effectsSql } from './sqlite-effects.js';
import type { SqliteNaming } from './sqlite-naming.js';

/**
 * The version of what {@link sqliteInstall} installs; see {@link SqlInstall} for when it (and
 * {@link SQLITE_INSTALL_COMPATIBLE_FROM}) goes up. test/store/install-versions.spec.ts pins the
 * SQL's fingerprint for each version.
 */
export const SQLITE_INSTALL_VERSION = 9;

/** The oldest install version whose code may run against this one's triggers and schema. */
export const SQLITE_INSTALL_COMPATIBLE_FROM = 1;

/** The triggers every SQLite migrate installs: the effects' and the counts'. */
export function sqliteInstall(naming: SqliteNaming, policy: HistoryPolicy): SqlInstall {
  return { version: SQLITE_INSTALL_VERSION, compatibleFrom: SQLITE_INSTALL_COMPATIBLE_FROM, sql: effectsSql(naming, policy) };
}
