import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { dropSchemas, openPostgresDataSource, uniqueSchema } from '../support/postgres.js';

// Runs the built package (dist/): `npm run build` first.
describe('issue 19 item 3: SIGTERM ends a PostgreSQL worker whose LISTEN never came back', () => {
  const schema = uniqueSchema('sigterm');

  afterAll(async () => {
    const admin = await openPostgresDataSource(1);
    await dropSchemas(admin, [schema]);
    await admin.destroy();
  });

  let child: ChildProcess | undefined;
  afterEach(() => {
    // A child that did not exit (the failure this test looks for) must not outlive the run.
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });

  it('exits on SIGTERM, and the held LISTEN connection leaves the server', async () => {
    child = spawn(process.execPath, [join(process.cwd(), 'test/nest/fixtures/stalled-listen-app.mjs')], {
      env: { ...process.env, SCHEMA: schema, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child!.on('exit', (code, signal) => resolve({ code, signal })));
    const pid = await new Promise<number>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        const match = /held (\d+)/.exec(output);
        if (match) resolve(Number(match[1]));
      };
      child!.stdout!.on('data', onData);
      child!.stderr!.on('data', onData);
      void exited.then(() => reject(new Error(`the app exited before its LISTEN was held:\n${output}`)));
    });

    child.kill('SIGTERM');
    // Before the fix the process never exited: app.close() waited for the pool, which waited for the listener.
    const exit = await exited;
    expect(exit.signal === 'SIGTERM' || exit.code === 0).toBe(true);
    expect(output).not.toMatch(/Error/);

    const admin = await openPostgresDataSource(1);
    try {
      for (;;) {
        const rows = await admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid]);
        if (rows.length === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } finally {
      await admin.destroy();
    }
  }, 30_000);
});
