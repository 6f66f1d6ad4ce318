import { Command, CommanderError } from 'commander';
import { SchedulerError, visibleText } from '../core/index.js';
import { errorDetail, isInstance, UNREADABLE } from '../worker/log-text.js';
import { CliError, EXIT_FAILURE, EXIT_USAGE } from './cli-error.js';
import { createContext } from './cli-context.js';
import { registerBatches } from './commands/batches.command.js';
import { registerCancel } from './commands/cancel.command.js';
import { registerDashboard } from './commands/dashboard.command.js';
import { registerDeadLetter } from './commands/dead-letter.command.js';
import { registerJobs } from './commands/jobs.command.js';
import { registerMigrate } from './commands/migrate.command.js';
import { registerQueues } from './commands/queues.command.js';
import { registerSchedules } from './commands/schedules.command.js';
import { registerSequences } from './commands/sequences.command.js';
import { registerGroups } from './commands/groups.command.js';
import { registerVerify } from './commands/verify.command.js';
import { registerStats } from './commands/stats.command.js';

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** The environment the CLI reads (`DATABASE_URL`, `DASHBOARD_TOKEN`); the process's when absent. */
  readonly env?: NodeJS.ProcessEnv;
}

/** One sentence: capitalized, ending with a full stop. */
function sentence(text: string): string {
  const trimmed = text.replace(/^error:\s*/i, '').split('\n')[0]!.trim();
  const capital = trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}

/**
 * Commander's message as one sentence, keeping the hint it prints on a line of its own for a
 * misspelt flag or command (`(Did you mean --limit?)`), which {@link sentence} alone would drop.
 */
function usageSentence(message: string): string {
  const first = sentence(message);
  const hint = /\(Did you mean ([^)\n]{1,80})\?\)/.exec(message);
  return hint ? `${first.slice(0, -1)} (did you mean ${hint[1]}?).` : first;
}

/** What was thrown, as text: an error's message, anything else as a string; never throws. */
function messageOf(error: unknown): string {
  try {
    return isInstance(error, Error) ? String(error.message) : String(error);
  } catch {
    return UNREADABLE;
  }
}

/** `--verbose`: the stack, its lines kept but every other control character made visible. */
function printStack(io: CliIo, error: unknown): void {
  const stack = isInstance(error, Error) ? errorDetail(error) : undefined;
  if (stack) io.err(visibleText(stack, { keepNewlines: true }));
}

/** Builds the `durable-scheduler` program. Every command exits 0 on success. */
export function buildProgram(io: CliIo): Command {
  const program = new Command('durable-scheduler')
    .description('Operate a nestjs-durable-scheduler store: dead letters, jobs, batches, schedules, sequences, groups, queues.')
    .option('--verbose', 'print stack traces with errors')
    .showHelpAfterError(false)
    .exitOverride()
    .configureOutput({ writeOut: (text) => io.out(text.replace(/\n$/, '')), writeErr: () => undefined });
  const ctx = createContext(io.out, io.env ?? process.env);
  registerDeadLetter(program, ctx);
  registerJobs(program, ctx);
  registerBatches(program, ctx);
  registerSchedules(program, ctx);
  registerSequences(program, ctx);
  registerGroups(program, ctx);
  registerVerify(program, ctx);
  registerQueues(program, ctx);
  registerCancel(program, ctx);
  registerMigrate(program, ctx);
  registerStats(program, ctx);
  registerDashboard(program, ctx);
  program.commands.forEach(function override(command: Command) {
    command.exitOverride().configureOutput({ writeOut: (text) => io.out(text.replace(/\n$/, '')), writeErr: () => undefined });
    command.commands.forEach(override);
  });
  return program;
}

/** Runs the CLI and resolves with its exit code; errors are one sentence on stderr. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const program = buildProgram(io);
  const verbose = argv.includes('--verbose');
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help') return 0;
      // Commander says "option '--x <v>' argument 'y' is invalid. <our reason>": keep our reason.
      const reason = error.code === 'commander.invalidArgument' ? error.message.split('is invalid. ').pop()! : error.message;
      io.err(visibleText(usageSentence(reason)));
      return EXIT_USAGE;
    }
    if (error instanceof CliError || error instanceof SchedulerError) {
      // Messages may quote what was typed or what a driver said: nothing in them may act on the terminal.
      io.err(visibleText(error.message));
      if (verbose) printStack(io, error);
      return error instanceof CliError ? error.exitCode : EXIT_FAILURE;
    }
    io.err(visibleText(sentence(`Unexpected error: ${messageOf(error)}`)));
    if (verbose) printStack(io, error);
    return EXIT_FAILURE;
  }
}
