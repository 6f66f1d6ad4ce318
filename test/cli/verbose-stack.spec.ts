import { describe, expect, it } from '@jest/globals';
import { runCli } from '../../lib/cli/program.js';
import { RAW_CONTROL } from '../bad-input/hostile.js';

async function cli(argv: string[]) {
  const err: string[] = [];
  const code = await runCli(argv, { out: () => undefined, err: (text) => void err.push(text) });
  return { code, stderr: err.join('\n') };
}

describe('durable-scheduler --verbose', () => {
  it('issue 19 workerfix 5: prints the stack with its terminal escapes made visible, keeping its lines', async () => {
    // The path is quoted in the error's message, so it is in its stack too.
    const { code, stderr } = await cli(['jobs', 'list', '--conn', 'sqlite:/nonexistent/\u001b[2J\u001b]0;owned\u0007/x.db', '--verbose']);
    expect(code).toBe(1);
    expect(stderr).not.toMatch(RAW_CONTROL);
    expect(stderr).toContain('CliError: No SQLite database exists at /nonexistent/\\x1b[2J\\x1b]0;owned\\x07/x.db.');
    expect(stderr).toMatch(/\n\s+at /);
  });
});
