import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { runCli } from '../../lib/cli/program.js';

/** What one CLI command did: its exit code and everything it printed. */
export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs the CLI in this process, as the binary does (dist/lib/cli/main.js prints each line and
 * exits with the code), with `DATABASE_URL` unset unless `env` sets it. A process costs a third
 * of a second to start, more on a loaded machine, and the CLI suites run hundreds of commands;
 * {@link runCliBinary} starts the built binary, for the cases about the process itself.
 */
export async function runCliHere(args: readonly string[], env: Record<string, string | undefined> = {}): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    out: (text) => void (stdout += `${text}\n`),
    err: (text) => void (stderr += `${text}\n`),
    env: { ...process.env, DATABASE_URL: undefined, ...env },
  });
  return { code, stdout, stderr };
}

/** Runs the built `durable-scheduler` binary, as an operator would. */
export function runCliBinary(args: readonly string[], env: Record<string, string | undefined> = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(process.cwd(), 'dist/lib/cli/main.js'), ...args],
      { env: { ...process.env, DATABASE_URL: undefined, ...env } as NodeJS.ProcessEnv },
      (error, stdout, stderr) => resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}
