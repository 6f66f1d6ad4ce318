import { IncompatibleSchemaError } from '../core/index.js';

/**
 * The SQL a SQL store installs on top of its migrations (functions and triggers, whose bodies can
 * change without a migration), with the version that tells one body from the next.
 *
 * - `version` goes up by one whenever the installed SQL changes, or a migration changes what the
 *   code may assume of the schema. The stores' install-version test pins a fingerprint of the SQL
 *   per version, so a change without a new version fails it.
 * - `compatibleFrom` is the oldest version whose code keeps every promise against this version's
 *   SQL and schema. It stays put while older code can still run (its statements find the functions
 *   they call, and nothing it ignores is a promise: say a claim ignoring a new kind of limit), and
 *   rises to `version` when that stops being true.
 */
export interface SqlInstall {
  readonly version: number;
  readonly compatibleFrom: number;
  /** The statements, rendered for one installation; their bodies may depend on options (the history policy). */
  readonly sql: string;
}

/** What the database records of the install it holds. */
export interface InstallRecord {
  readonly version: number;
  readonly compatibleFrom: number;
}

/**
 * What a booting node does, decided under the migration lock from what the database records:
 *
 * - `upgrade`: nothing newer is installed; apply the unseen migrations, install this node's SQL and
 *   record its version (an equal version installs again, so a changed history policy applies);
 * - `keep`: a newer version installed its SQL, and says this node's code may run against it; the
 *   node touches nothing (installing its older functions would take back what the newer ones promise).
 *
 * Throws {@link IncompatibleSchemaError} when a newer version says this node's code may not run
 * against it, or the database lacks a migration this node knows (it was not upgraded by a version
 * that has this node's migrations): in both cases nothing has been written.
 */
export function installStep(recorded: InstallRecord | undefined, mine: SqlInstall, unapplied: readonly number[], where: string): 'upgrade' | 'keep' {
  if (recorded === undefined || recorded.version <= mine.version) return 'upgrade';
  const newer = `The scheduler tables at ${where} were installed by a newer version of nestjs-durable-scheduler (install version ${recorded.version})`;
  if (mine.version < recorded.compatibleFrom) {
    throw new IncompatibleSchemaError(
      mine.version,
      recorded.version,
      `${newer}, which runs only with install version ${recorded.compatibleFrom} or later, and this node has ${mine.version}; upgrade this node.`,
    );
  }
  if (unapplied.length > 0) {
    throw new IncompatibleSchemaError(
      mine.version,
      recorded.version,
      `${newer} that lacks migration ${unapplied.join(', ')} of this node's install version ${mine.version}, so neither can run the other's schema; run one release line on this database.`,
    );
  }
  return 'keep';
}
