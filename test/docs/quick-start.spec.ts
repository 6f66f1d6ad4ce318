import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../sample/sample-process.js';
import { databaseUrl, openPostgresDataSource } from '../support/postgres.js';
import { freshApp, linkDependencies, packProject, tsc } from '../support/packed-app.js';
import { listening } from '../support/listening.js';

/** The README's Quick start section: from its heading to the next one. */
function quickStart(): string {
  const readme = readFileSync(join(process.cwd(), 'README.md'), 'utf8');
  const start = readme.indexOf('## Quick start with NestJS');
  expect(start).toBeGreaterThanOrEqual(0);
  return readme.slice(start, readme.indexOf('\n## ', start + 1));
}

/** What the section tells a newcomer to do, read from its blocks. */
function instructions(section: string) {
  const files = [...section.matchAll(/```ts\n\/\/ ([\w.-]+\.ts)\n([\s\S]*?)```/g)].map((m) => ({ file: m[1]!, code: m[2]! }));
  const bash = [...section.matchAll(/```bash\n([\s\S]*?)```/g)].map((m) => m[1]!).join('\n');
  // The packages of every `npm install` line, as one list (the package itself comes from the tarball).
  const packages = [...bash.matchAll(/npm install ([^&\n]+)/g)]
    .flatMap((m) => m[1]!.trim().split(/\s+/))
    .filter((word) => !word.startsWith('-') && word !== 'nestjs-durable-scheduler')
    // Without the version a line pins (better-sqlite3@12): the project's own copy is linked.
    .map((word) => word.replace(/(.)@[^/]*$/, '$1'));
  // The options `npx tsc --init` is given: it writes its defaults and these into tsconfig.json.
  const initArgs = /npx tsc --init([^&\n]*)/.exec(bash)![1]!.trim().split(/\s+/).filter(Boolean);
  return { files, packages, initArgs, npmInit: bash.includes('npm pkg set type=module') };
}

/**
 * The Install section's CommonJS note, read as a newcomer follows it: whether it says to leave
 * `type=module` out, and the options it adds to `tsc --init` (each `--name value` in inline code,
 * and the `module`/`moduleResolution` it says to set).
 */
function commonJsNote() {
  const readme = readFileSync(join(process.cwd(), 'README.md'), 'utf8');
  const install = readme.slice(readme.indexOf('## Install'), readme.indexOf('## Quick start with NestJS'));
  const paragraph = install.split('\n\n').find((text) => text.replace(/\s+/g, ' ').includes('An app compiled to CommonJS')) ?? '';
  const note = paragraph.replace(/\s+/g, ' ');
  const moduleSetting = /`module` and `moduleResolution` set to `(\w+)`/.exec(note)![1]!;
  const flags = [...note.matchAll(/`(--\w+(?: [^`-][^`]*)?)`/g)].flatMap((m) => m[1]!.split(' '));
  return {
    omitsTypeModule: note.includes('without `npm pkg set type=module`'),
    initArgs: ['--module', moduleSetting, '--moduleResolution', moduleSetting, ...flags],
  };
}

/**
 * The README's test section, read as a newcomer follows it: the packages it installs (without
 * their versions), how it runs jest, the jest config, the spec with the path it names, and the
 * top-level tsconfig.json setting that keeps specs out of the app's build.
 */
function testingSection() {
  const readme = readFileSync(join(process.cwd(), 'README.md'), 'utf8');
  const start = readme.indexOf('## Testing your app');
  expect(start).toBeGreaterThanOrEqual(0);
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  const prose = section.replace(/```[\s\S]*?```/g, '').replace(/\s+/g, ' ');
  const installs = /`([^`]+)` with `npm install -D`/.exec(prose)![1]!.split(' ');
  const packages = installs.map((word) => word.replace(/(.)@[^/]*$/, '$1'));
  const run = /`NODE_OPTIONS=(\S+) npx jest`/.exec(prose)!;
  const config = /```js\n\/\/ jest\.config\.js\n([\s\S]*?)```/.exec(section)![1]!;
  const spec = /```ts\n\/\/ (test\/[\w.-]+\.spec\.ts)\n([\s\S]*?)```/.exec(section)!;
  const tsconfig = JSON.parse(`{${/`("include": \[[^`]*\])` in `tsconfig\.json`/.exec(prose)![1]!}}`) as Record<string, unknown>;
  // What `npx tsc` says about a spec it should not compile, by the folder the spec is in.
  const [, inSrc, inTest] = /\(`([^`]+)` in `src\/`, `([^`]+)` in `test\/`\)/.exec(prose)!;
  return { installs, packages, nodeOptions: run[1]!, config, spec: { file: spec[1]!, code: spec[2]! }, tsconfig, buildErrors: { src: inSrc!, test: inTest! } };
}

/** `node dist/main.js` in the app folder, until it listens. */
async function startApp(dir: string, env: Record<string, string | undefined>) {
  const port = await freePort();
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env, PORT: String(port), NO_COLOR: '1' };
  for (const [key, value] of Object.entries(childEnv)) if (value === undefined) delete childEnv[key];
  const child = spawn(process.execPath, ['dist/main.js'], { cwd: dir, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      log += chunk.toString();
      if (log.includes('Nest application successfully started')) resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then(({ code }) => reject(new Error(`the Quick start app exited with code ${code}:\n${log}`)));
  });
  // Nest logs that line when init ends, just before listen() binds: wait for the port itself.
  await listening(port, exited);
  const base = `http://127.0.0.1:${port}`;
  return {
    log: () => log,
    request: async (method: string, path: string, body?: unknown) => {
      const response = await fetch(base + path, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.status, json: (await response.json()) as Record<string, unknown> };
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** Places an order as the README's curl lines do, and waits (up to 15 s) for its job to confirm it. */
async function placeAndConfirm(app: Awaited<ReturnType<typeof startApp>>) {
  const placed = await app.request('POST', '/orders', { item: 'lamp' });
  expect(placed).toMatchObject({ status: 201, json: { item: 'lamp', status: 'pending', id: expect.any(String) } });
  const deadline = Date.now() + 15_000;
  for (;;) {
    const { json } = await app.request('GET', `/orders/${placed.json.id}`);
    if (json.status === 'confirmed' || Date.now() > deadline) return json;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('issue 19 item 13: the README Quick start, as pasted', () => {
  let app: { dir: string; cleanup: () => void };
  let pack: { tarball: string; cleanup: () => void };

  beforeAll(async () => {
    const { files, packages, initArgs, npmInit } = instructions(quickStart());
    expect(files.map((f) => f.file).sort()).toEqual(['app.module.ts', 'confirm-order.job.ts', 'jobs.ts', 'main.ts', 'order.entity.ts', 'orders.controller.ts']);
    expect(npmInit).toBe(true);
    pack = await packProject();
    app = await freshApp(pack.tarball, { type: 'module' }, packages);
    // `tsc --init` as the newcomer runs it, with the README's options; the file is used as written.
    await tsc(app.dir, '--init', ...initArgs);
    mkdirSync(join(app.dir, 'src'));
    for (const { file, code } of files) writeFileSync(join(app.dir, 'src', file), code);
    await tsc(app.dir, '-p', '.');
  }, 180_000);

  afterAll(() => {
    app?.cleanup();
    pack?.cleanup();
  });

  it('issue 19 item 13: compiles under the tsc --init defaults, strict and exactOptionalPropertyTypes included', () => {
    const init = readFileSync(join(app.dir, 'tsconfig.json'), 'utf8');
    expect(init).toMatch(/"types": \["node"\]/);
    expect(init).toMatch(/"emitDecoratorMetadata": true/);
    expect(init).toMatch(/"strict": true/);
    expect(init).toMatch(/"exactOptionalPropertyTypes": true/);
    expect(init).toMatch(/"verbatimModuleSyntax": true/);
    expect(readFileSync(join(app.dir, 'dist/main.js'), 'utf8')).toContain("import { AppModule } from './app.module.js'");
  });

  it('issue 19 item 13: runs one job on SQLite, with no server', async () => {
    const running = await startApp(app.dir, { DATABASE_URL: undefined });
    try {
      expect(await placeAndConfirm(running)).toMatchObject({ item: 'lamp', status: 'confirmed' });
    } finally {
      const exit = await running.stop();
      expect(exit.code === 0 || exit.signal === 'SIGTERM').toBe(true);
      expect(running.log()).toMatch(/worker \S+ stopped\./);
    }
  });

  it('issue 35 item 17: compiles to CommonJS as the Install note says, and runs one job on SQLite', async () => {
    const { files, packages, initArgs } = instructions(quickStart());
    const note = commonJsNote();
    expect(note.omitsTypeModule).toBe(true);
    // A second app: no "type": "module", and `tsc --init` with the Quick start's options, then the note's.
    const cjs = await freshApp(pack.tarball, {}, packages);
    try {
      await tsc(cjs.dir, '--init', ...initArgs, ...note.initArgs);
      mkdirSync(join(cjs.dir, 'src'));
      for (const { file, code } of files) writeFileSync(join(cjs.dir, 'src', file), code);
      await tsc(cjs.dir, '-p', '.');
      expect(readFileSync(join(cjs.dir, 'dist/main.js'), 'utf8')).toContain('require("./app.module.js")');
      const running = await startApp(cjs.dir, { DATABASE_URL: undefined });
      try {
        expect(await placeAndConfirm(running)).toMatchObject({ item: 'lamp', status: 'confirmed' });
      } finally {
        await running.stop();
        expect(running.log()).toMatch(/worker \S+ stopped\./);
      }
    } finally {
      cjs.cleanup();
    }
  }, 180_000);

  it('issue 19 item 13: runs one job on PostgreSQL, with DATABASE_URL set', async () => {
    // A database of its own: the app creates its tables in the default schemas.
    const name = `quickstart_${randomBytes(4).toString('hex')}`;
    const admin = await openPostgresDataSource(1);
    await admin.query(`CREATE DATABASE "${name}"`);
    const url = new URL(databaseUrl());
    url.pathname = `/${name}`;
    try {
      const running = await startApp(app.dir, { DATABASE_URL: url.toString() });
      try {
        expect(await placeAndConfirm(running)).toMatchObject({ item: 'lamp', status: 'confirmed' });
        expect(running.log()).not.toMatch(/pool holds/);
      } finally {
        await running.stop();
        expect(running.log()).toMatch(/worker \S+ stopped\./);
      }
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.destroy();
    }
  });
  // Last: it adds specs and a tsconfig.json setting to the app the tests above ran.
  it('issue 35 item 18: the test section installs, configures and runs its spec, and the spec stays out of the Quick start\'s tsc build', async () => {
    const section = testingSection();
    const pinned = /^typescript@(\d+)$/.exec(section.installs.find((word) => word.startsWith('typescript@')) ?? '');
    // The README pins the compiler these tests use.
    expect(pinned?.[1]).toBe((JSON.parse(readFileSync(join(process.cwd(), 'node_modules/typescript/package.json'), 'utf8')) as { version: string }).version.split('.')[0]);
    // Without the advice a spec breaks the app's build, as the README says, in src/ and in test/.
    const inSrc = join(app.dir, 'src', basename(section.spec.file));
    writeFileSync(inSrc, section.spec.code.replaceAll("'../src/", "'./"));
    await expect(tsc(app.dir, '-p', '.')).rejects.toThrow(section.buildErrors.src);
    rmSync(inSrc);
    mkdirSync(join(app.dir, dirname(section.spec.file)), { recursive: true });
    writeFileSync(join(app.dir, section.spec.file), section.spec.code);
    writeFileSync(join(app.dir, 'jest.config.js'), section.config);
    await expect(tsc(app.dir, '-p', '.')).rejects.toThrow(section.buildErrors.test);
    // The README's setting, added to the tsconfig.json that `tsc --init` wrote.
    renameSync(join(app.dir, 'tsconfig.json'), join(app.dir, 'tsconfig.init.json'));
    writeFileSync(join(app.dir, 'tsconfig.json'), JSON.stringify({ extends: './tsconfig.init.json', ...section.tsconfig }, null, 2));
    await tsc(app.dir, '-p', '.');
    expect(existsSync(join(app.dir, 'dist', section.spec.file.replace(/\.ts$/, '.js')))).toBe(false);
    // Then the packages the section installs, and jest as it runs it.
    linkDependencies(app.dir, section.packages);
    const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: section.nodeOptions, NO_COLOR: '1' };
    for (const key of Object.keys(env)) if (key.startsWith('JEST_')) delete env[key];
    const jest = await promisify(execFile)(process.execPath, [join(app.dir, 'node_modules/jest/bin/jest.js'), '--ci'], { cwd: app.dir, env }).catch(
      (error: { stdout: string; stderr: string }) => ({ stdout: error.stdout, stderr: error.stderr, failed: true }),
    );
    expect({ failed: 'failed' in jest, output: jest.stderr }).toEqual({ failed: false, output: expect.stringMatching(/Tests:\s+1 passed, 1 total/) });
  }, 180_000);
});
