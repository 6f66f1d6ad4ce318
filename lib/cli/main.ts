#!/usr/bin/env node
import 'reflect-metadata';
import { runCli } from './program.js';

// A reader that stops early (`durable-scheduler jobs list | head`) closes the pipe: the rest of
// the output has nowhere to go, so the command ends quietly, as a shell tool does, rather than
// crashing on the failed write with a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(process.exitCode ?? 0);
});

const code = await runCli(process.argv.slice(2), {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
});
process.exitCode = code;
