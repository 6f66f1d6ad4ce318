#!/usr/bin/env node
import 'reflect-metadata';
import { runCli } from './program.js';

const code = await runCli(process.argv.slice(2), {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
});
process.exitCode = code;
