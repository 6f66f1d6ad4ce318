#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { describeSettings, parseSeed } from './sim-settings.js';
import { runSimulation, type SimResult } from './simulation.js';
import { batchSeed, runBatch } from './seed-batch.js';
import { mutantNamed } from './sabotage/mutants.js';

const USAGE = 'Usage: npm run sim -- --seed <S> [--trace] | --seeds <N> [--base <S>] [--mutant <name>]';

function verdict(result: SimResult): string {
  const bad = result.oracles.filter((o) => o.violations > 0);
  const drain = result.drainedAfterMs === null ? 'did not drain' : `drained ${result.drainedAfterMs} ms after faults stopped`;
  if (bad.length === 0) return `ok: ${result.jobs} jobs, ${result.events} events, ${drain}, hash ${result.hash.slice(0, 16)}`;
  return [`FAILED: ${bad.map((o) => `${o.name}=${o.violations}`).join(' ')} (${drain})`, ...bad.flatMap((o) => o.examples.map((e) => `  ${o.name}: ${e}`))].join('\n');
}

/**
 * Under `npm run sim`, answers whether npm has gone: npm forwards SIGTERM to its script, but a
 * batch can outlive an npm that died another way (SIGKILL, or a signal it could not forward), and a
 * million-seed batch nobody waits for would run for hours. Started by hand, the batch keeps running
 * whoever its parent becomes, as `nohup` users expect.
 */
function orphanCheck(): () => boolean {
  if (process.env.npm_lifecycle_event !== 'sim') return () => false;
  const parent = process.ppid;
  return () => process.ppid !== parent;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { seed: { type: 'string' }, seeds: { type: 'string' }, base: { type: 'string' }, mutant: { type: 'string' }, trace: { type: 'boolean' } },
  });
  const mutant = values.mutant === undefined ? undefined : mutantNamed(values.mutant);
  if (values.seed !== undefined) {
    const seed = parseSeed(values.seed);
    const trace = values.trace ? (event: unknown) => console.log(JSON.stringify(event)) : undefined;
    const result = await runSimulation(seed, { mutant, trace });
    console.log(describeSettings(result.settings) + (mutant ? ` mutant=${mutant.name}` : ''));
    console.log(`faults: ${Object.entries(result.faults).map(([k, v]) => `${k}=${v}`).join(' ')}`);
    console.log(`coverage: ${Object.entries(result.coverage).map(([k, v]) => `${k}=${v}`).join(' ')}`);
    console.log(verdict(result));
    return result.violations > 0 ? 1 : 0;
  }
  if (values.seeds !== undefined) {
    const count = Number(values.seeds);
    if (!Number.isInteger(count) || count < 1) throw new Error(`--seeds must be a whole number of runs, got "${values.seeds}".`);
    const base = values.base === undefined ? 0n : parseSeed(values.base);
    const started = Date.now();
    const orphaned = orphanCheck();
    console.error(`running ${count} seeds from base 0x${base.toString(16)}; progress every 1000 seeds.`);
    const summary = await runBatch(base, count, {
      mutant,
      onResult: (result, i) => {
        if (orphaned()) {
          console.error('npm, which started this batch, has exited; stopping.');
          process.exit(143);
        }
        if (result.violations > 0) console.log(`seed 0x${result.settings.seed.toString(16)} (${describeSettings(result.settings)})\n${verdict(result)}`);
        if ((i + 1) % 1000 === 0) console.error(`${i + 1} seeds in ${((Date.now() - started) / 1000).toFixed(0)} s`);
      },
    });
    console.log(`seeds: ${summary.seeds} from base 0x${base.toString(16)} (first 0x${batchSeed(base, 0).toString(16)}), failed: ${summary.failed.length}, jobs: ${summary.jobs}, events: ${summary.events}, longest drain: ${summary.longestDrainMs} ms`);
    console.log(`violations: ${Object.entries(summary.violationsByOracle).map(([k, v]) => `${k}=${v}`).join(' ')}`);
    console.log(`faults: ${Object.entries(summary.faults).map(([k, v]) => `${k}=${v}`).join(' ')}`);
    console.log(`coverage: ${Object.entries(summary.coverage).map(([k, v]) => `${k}=${v}`).join(' ')}`);
    console.log(`wall time: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return summary.failed.length > 0 ? 1 : 0;
  }
  console.error(USAGE);
  return 2;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(2);
  },
);
