import type { HistoryPolicy } from '../../core/index.js';
import type { SqlInstall } from '../sql-install.js';
import { effectsSql } from './postgres-effects.js';
import { limitFunctionsSql } from './postgres-limits.js';
import type { PostgresNaming } from './postgres-naming.js';

/**
 * The version of what {@link postgresInstall} installs; see {@link SqlInstall} for when it (and
 * {@link POSTGRES_INSTALL_COMPATIBLE_FROM}) goes up. test/store/install-versions.spec.ts pins the
 * SQL's fingerprint for each version.
 */
export const POSTGRES_INSTALL_VERSION = 11;

/** The oldest install version whose code may run against this one's functions and schema. */
export const POSTGRES_INSTALL_COMPATIBLE_FROM = 1;

/** The functions and triggers every PostgreSQL migrate installs: the limits' and the effects'. */
export function postgresInstall(naming: PostgresNaming, policy: HistoryPolicy): SqlInstall {
  return {
    version: POSTGRES_INSTALL_VERSION,
    compatibleFrom: POSTGRES_INSTALL_COMPATIBLE_FROM,
    sql: limitFunctionsSql(naming) + effectsSql(naming, policy),
  };
}
