import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { APP_DEPENDENCIES, freshApp, packProject, tsc } from '../support/packed-app.js';

const run = promisify(execFile);
const root = process.cwd();

/** The folder of a package as the project resolves it (its node_modules, or NODE_PATH). */
function packageDir(name: string): string {
  try {
    return dirname(createRequire(join(root, 'package.json')).resolve(`${name}/package.json`));
  } catch {
    throw new Error(`${name} is not installed; it is a devDependency of this project: run npm install.`);
  }
}

/** The tests an example's spec file declares. */
function testsIn(file: string): number {
  return [...readFileSync(file, 'utf8').matchAll(/^\s*it\(/gm)].length;
}

/**
 * Every bare module specifier that `entry` reaches through its relative imports: what a user's
 * test runner must be able to load for that entry point.
 */
function bareImports(entry: string): Set<string> {
  const seen = new Set<string>();
  const bare = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const source = readFileSync(file, 'utf8');
    for (const m of source.matchAll(/\bfrom\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)|\brequire\(\s*['"]([^'"]+)['"]\s*\)/g)) {
      const specifier = (m[1] ?? m[2] ?? m[3])!;
      if (specifier.startsWith('.')) visit(resolve(dirname(file), specifier));
      else bare.add(specifier);
    }
  };
  visit(entry);
  return bare;
}

/**
 * The runnable examples of docs/testing.md: an application's own tests of its jobs, through
 * `nestjs-durable-scheduler/testing`, under the runner each example names. Each runs for real, in
 * a fresh folder with the packed package and its peers, as `npm test` would run it there.
 */
describe('issue 35 item 12: the testing kit under vitest, and under jest in ESM mode', () => {
  let pack: { tarball: string; cleanup: () => void };
  const apps: { cleanup: () => void }[] = [];

  beforeAll(async () => {
    pack = await packProject();
  }, 120_000);

  afterAll(() => {
    for (const app of apps) app.cleanup();
    pack?.cleanup();
  });

  /** The example copied into a fresh application folder, with its test runner linked in; resolves with the folder. */
  async function install(example: string, runners: readonly string[], bins: Readonly<Record<string, string>> = {}): Promise<string> {
    const source = join(root, 'examples', example);
    const packageJson = JSON.parse(readFileSync(join(source, 'package.json'), 'utf8')) as Record<string, unknown>;
    const app = await freshApp(pack.tarball, packageJson, [...APP_DEPENDENCIES, '@nestjs/testing']);
    apps.push(app);
    cpSync(source, app.dir, { recursive: true });
    for (const name of runners) {
      mkdirSync(dirname(join(app.dir, 'node_modules', name)), { recursive: true });
      symlinkSync(packageDir(name), join(app.dir, 'node_modules', name), 'dir');
    }
    mkdirSync(join(app.dir, 'node_modules/.bin'), { recursive: true });
    for (const [bin, target] of Object.entries(bins)) symlinkSync(target, join(app.dir, 'node_modules/.bin', bin));
    // The example compiles against the package's published types, as its guide promises.
    await tsc(app.dir, '-p', '.', '--noEmit');
    return app.dir;
  }

  /** `npm test` in the app folder: its output, or a rejection that carries it. */
  async function npmTest(dir: string): Promise<string> {
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0', CI: '1' };
    // The project's own test run sets these; the example's script sets what it needs itself.
    delete env.NODE_OPTIONS;
    delete env.NODE_PATH;
    try {
      const { stdout, stderr } = await run('npm', ['test'], { cwd: dir, env, maxBuffer: 16 * 1024 * 1024 });
      return `${stdout}\n${stderr}`;
    } catch (error) {
      const { stdout, stderr } = error as { stdout?: string; stderr?: string };
      throw new Error(`npm test failed in the example:\n${stdout ?? ''}\n${stderr ?? ''}`);
    }
  }

  it('issue 35 item 12: the vitest example (an ESM project, as nest new makes it) passes, with nothing of jest installed', async () => {
    const dir = await install('testing-vitest', ['vitest'], { vitest: '../vitest/vitest.mjs' });
    expect(existsSync(join(dir, 'node_modules/@jest/globals'))).toBe(false);
    expect(existsSync(join(dir, 'node_modules/jest'))).toBe(false);
    const tests = testsIn(join(dir, 'src/quotes.service.spec.ts'));
    expect(tests).toBeGreaterThan(0);
    const output = await npmTest(dir);
    expect(output).toMatch(new RegExp(`Tests\\s+${tests} passed \\(${tests}\\)`));
  }, 240_000);

  it('issue 35 item 12: the jest example (a CommonJS project running jest in ESM mode) passes', async () => {
    const dir = await install('testing-jest', ['jest', 'ts-jest', '@jest/globals']);
    expect(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))).not.toHaveProperty('type');
    const tests = testsIn(join(dir, 'src/quotes.service.spec.ts'));
    expect(tests).toBeGreaterThan(0);
    const output = await npmTest(dir);
    expect(output).toMatch(new RegExp(`Tests:\\s+${tests} passed, ${tests} total`));
  }, 240_000);

  it('the testing entry point imports no test runner: a vitest user needs nothing of jest', async () => {
    const app = await freshApp(pack.tarball, { type: 'module' }, []);
    apps.push(app);
    const imports = [...bareImports(join(app.dir, 'node_modules/nestjs-durable-scheduler/dist/lib/testing/index.js'))];
    expect(imports).toContain('@nestjs/common');
    expect(imports.filter((name) => /jest|vitest|mocha|^node:test$/.test(name))).toEqual([]);
  });

  it('the two examples run the same tests: their spec files differ only in the runner import and the module style', () => {
    const read = (example: string) => readFileSync(join(root, 'examples', example, 'src/quotes.service.spec.ts'), 'utf8');
    const vitest = read('testing-vitest').replace("from 'vitest';", "from '<runner>';").replace(/(from '\.\/[\w.-]+)\.js'/g, "$1'");
    const jest = read('testing-jest').replace("from '@jest/globals';", "from '<runner>';");
    expect(jest).toBe(vitest);
    for (const file of ['quote-price.job.ts', 'expire-quote.job.ts', 'quotes.service.ts']) {
      expect(readFileSync(join(root, 'examples/testing-jest/src', file), 'utf8')).toBe(readFileSync(join(root, 'examples/testing-vitest/src', file), 'utf8'));
    }
  });
});
