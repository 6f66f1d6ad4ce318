import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freshApp, packProject, tsc } from '../support/packed-app.js';

const run = promisify(execFile);

/**
 * NestJS apps compiled to CommonJS load ESM-only packages through require(esm) (Node 20.19+).
 * That needs an exports condition that require() matches; with only `import`, the app type-checks
 * and then dies at run time with ERR_PACKAGE_PATH_NOT_EXPORTED.
 */
describe('issue 19 item 12: a CommonJS NestJS app', () => {
  let app: { dir: string; cleanup: () => void };
  let pack: { tarball: string; cleanup: () => void };

  beforeAll(async () => {
    pack = await packProject();
    // No "type": "module": the compiled files are CommonJS, as in a Nest CLI project.
    app = await freshApp(pack.tarball, {});
    cpSync(join(process.cwd(), 'test/fixtures/commonjs-app'), app.dir, { recursive: true });
    await tsc(app.dir, '-p', '.');
    expect(readFileSync(join(app.dir, 'dist/main.js'), 'utf8')).toContain('require("nestjs-durable-scheduler")');
  }, 120_000);

  afterAll(() => {
    app?.cleanup();
    pack?.cleanup();
  });

  it('issue 19 item 12: require() loads the packed package', async () => {
    const { stdout } = await run(process.execPath, ['-e', "const s = require('nestjs-durable-scheduler'); console.log(typeof s.SchedulerModule, typeof s.Job)"], { cwd: app.dir });
    expect(stdout.trim()).toBe('function function');
  });

  it('issue 19 item 12: boots SchedulerModule on SQLite and runs a job', async () => {
    const { stdout, stderr } = await run(process.execPath, [join(app.dir, 'dist/main.js')], {
      cwd: app.dir,
      env: { ...process.env, SQLITE_FILE: join(app.dir, 'app.db'), NO_COLOR: '1' },
    });
    expect(JSON.parse(stdout.trim().split('\n').pop()!)).toEqual({
      format: 'commonjs',
      status: 'applied',
      state: 'succeeded',
      output: { greeting: 'hello commonjs', attempt: 1 },
    });
    expect(stderr).not.toMatch(/Warning|Error/);
  });
});
