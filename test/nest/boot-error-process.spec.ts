import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';

// Runs the built package (dist/): `npm run build` first.
describe('issue 19 item 18: a bad @Job({ schedule }) in a real process', () => {
  it('is reported by Nest\'s ExceptionHandler and exits 1, never as an uncaught rejection', async () => {
    const child = spawn(process.execPath, [join(process.cwd(), 'test/nest/fixtures/bad-schedule-app.mjs')], {
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', (exitCode) => resolve(exitCode)));
    expect(code).toBe(1);
    expect(output).not.toContain('booted');
    expect(output).toMatch(/ERROR \[ExceptionHandler\] InvalidArgumentError: NightlyReport \(@Job 'reports\.nightly'\) declares a bad schedule: cron "99 \* \* \* \*" is not a valid cron pattern/);
    // Node's own report of an uncaught error starts with the file and line it came from.
    expect(output).not.toMatch(/^file:\/\//m);
  });
});
