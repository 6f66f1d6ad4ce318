import type { SqlInstall } from '../sql-install.js';

/**
 * The version of what the MySQL store assumes of its schema; see {@link SqlInstall} for when it
 * (and {@link MYSQL_INSTALL_COMPATIBLE_FROM}) goes up. The store installs no functions or triggers
 * (docs/stores.md, MySQL, says why), so it carries no SQL: the record alone tells a node whether
 * the tables were last migrated by code it can run beside.
 */
export const MYSQL_INSTALL_VERSION = 7;

/** The oldest install version whose code may run against this one's schema. */
export const MYSQL_INSTALL_COMPATIBLE_FROM = 1;

export function mysqlInstall(): SqlInstall {
  return { version: MYSQL_INSTALL_VERSION, compatibleFrom: MYSQL_INSTALL_COMPATIBLE_FROM, sql: '' };
}
