import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = process.cwd();

/** What `npm pack` would publish, from the built dist/ (as `npm test` leaves it). */
async function packedFiles(): Promise<string[]> {
  if (!existsSync(join(root, 'dist/lib/index.js'))) throw new Error('dist/ is missing; run npm run build before this test.');
  const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root });
  const [pack] = JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>;
  return pack!.files.map((file) => file.path);
}

function jsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? jsFiles(join(dir, entry.name)) : entry.name.endsWith('.js') ? [join(dir, entry.name)] : [],
  );
}

describe('the published tarball', () => {
  it('issue 19 workerfix 4: ships no source maps, and no compiled file points to one', async () => {
    const files = await packedFiles();
    expect(files.filter((path) => path.endsWith('.map'))).toEqual([]);
    // A dangling sourceMappingURL makes debuggers and bundlers look for sources the package lacks.
    const pointing = jsFiles(join(root, 'dist/lib')).filter((path) => readFileSync(path, 'utf8').includes('sourceMappingURL'));
    expect(pointing).toEqual([]);
  }, 60_000);

  it('issue 19 workerfix 4: carries the MIT LICENSE that package.json names', async () => {
    const files = await packedFiles();
    expect(files).toContain('LICENSE');
    const license = readFileSync(join(root, 'LICENSE'), 'utf8');
    expect(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).license).toBe('MIT');
    expect(license).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} nestjs-durable-scheduler contributors\n/);
    expect(license).toContain('THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND');
  }, 60_000);
});
