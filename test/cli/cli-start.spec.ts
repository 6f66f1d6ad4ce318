import { afterAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// A probe loaded before the CLI reports, at exit, whether TypeORM's CommonJS files were loaded.
const dir = mkdtempSync(join(tmpdir(), 'cli-start-'));
const probe = join(dir, 'probe.mjs');
writeFileSync(
  probe,
  `import { createRequire } from 'node:module';
const cache = createRequire(import.meta.url)('module')._cache;
process.on('exit', () => process.stderr.write('typeorm loaded: ' + Object.keys(cache).some((k) => k.includes('/node_modules/typeorm/')) + '\\n'));
`,
);

function cli(args: readonly string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', probe, join(process.cwd(), 'dist/lib/cli/main.js'), ...args], { env: { ...process.env, DATABASE_URL: undefined } as NodeJS.ProcessEnv }, (error, _stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stderr }),
    );
  });
}

// Operators and the bad-input suites run the CLI once per command: a refusal should cost node's
// start, not TypeORM's load (about 0.5 s of CPU).
describe('the CLI loads TypeORM and the stores only to connect', () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    ['an unknown option', ['stats', '--bogus']],
    ['a bad queue name', ['queues', 'pause', 'a b', '--conn', 'sqlite:/nowhere.db']],
    ['--help', ['--help']],
  ])('%s is answered without loading TypeORM', async (_label, args) => {
    const run = await cli(args);
    expect(run.stderr).toMatch(/typeorm loaded: false\n$/);
  });

  it('a command that connects loads it', async () => {
    const run = await cli(['migrate', '--conn', `sqlite:${join(dir, 'jobs.db')}`]);
    expect(run).toEqual({ code: 0, stderr: 'typeorm loaded: true\n' });
  });
});
