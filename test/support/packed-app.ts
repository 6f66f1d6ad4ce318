import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = process.cwd();

/**
 * What an application installs next to the package: its peers, the tools to compile it, and
 * (hoisted, as npm would put them) the package's own dependencies.
 */
export const APP_DEPENDENCIES = [
  '@nestjs/common',
  '@nestjs/core',
  '@nestjs/platform-express',
  '@nestjs/typeorm',
  'typeorm',
  'reflect-metadata',
  'rxjs',
  'better-sqlite3',
  'pg',
  'typescript',
  '@types/node',
];

/**
 * Packs the project as `npm pack` would publish it (from the built dist/), into a temp folder.
 * Resolves with the tarball's path.
 */
export async function packProject(): Promise<{ tarball: string; cleanup: () => void }> {
  if (!existsSync(join(root, 'dist/lib/index.js'))) throw new Error('dist/ is missing; run npm run build before this test.');
  const dir = mkdtempSync(join(tmpdir(), 'durable-scheduler-pack-'));
  const { stdout } = await run('npm', ['pack', '--pack-destination', dir, '--silent', '--ignore-scripts'], { cwd: root });
  const file = stdout.trim().split('\n').pop()!;
  return { tarball: join(dir, file), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A fresh application folder outside the project: the packed package extracted into its
 * node_modules, as `npm install <tarball>` would, and every other dependency linked from the
 * project's node_modules (no registry is used). Node follows the links to their real paths, so
 * the app and the package share one copy of Nest and TypeORM, as a real install would.
 */
export async function freshApp(
  tarball: string,
  packageJson: Record<string, unknown>,
  dependencies: readonly string[] = APP_DEPENDENCIES,
): Promise<{ dir: string; cleanup: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), 'durable-scheduler-app-'));
  const modules = join(dir, 'node_modules');
  mkdirSync(modules);
  await run('tar', ['xzf', tarball, '-C', modules]);
  renameSync(join(modules, 'package'), join(modules, 'nestjs-durable-scheduler'));
  const own = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  linkDependencies(dir, [...new Set([...dependencies, ...Object.keys(own.dependencies)])]);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'fresh-app', private: true, ...packageJson }, null, 2));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Links more of the project's node_modules into an app made by {@link freshApp}, as a later `npm install` would add them. */
export function linkDependencies(dir: string, names: readonly string[]): void {
  const modules = join(dir, 'node_modules');
  for (const name of names) {
    if (existsSync(join(modules, name))) continue;
    mkdirSync(dirname(join(modules, name)), { recursive: true });
    symlinkSync(join(root, 'node_modules', name), join(modules, name), 'dir');
  }
}

/** The project's TypeScript compiler, run in `cwd` (`tsc --init`, `tsc -p .`). Rejects with its output. */
export async function tsc(cwd: string, ...args: string[]): Promise<string> {
  try {
    const { stdout } = await run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), ...args], { cwd });
    return stdout;
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`tsc ${args.join(' ')} failed:\n${stdout ?? ''}${stderr ?? ''}`);
  }
}
