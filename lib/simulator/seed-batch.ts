import { noCoverage, runSimulation, type SimCoverage, type SimResult } from './simulation.js';
import type { Mutant } from './sabotage/mutants.js';
import type { FaultKind } from './sim-event.js';

/** The i-th seed of a batch: spread over 64 bits (SplitMix64), so neighbouring runs share nothing. */
export function batchSeed(base: bigint, index: number): bigint {
  let z = BigInt.asUintN(64, base + 0x9e3779b97f4a7c15n * BigInt(index + 1));
  z = BigInt.asUintN(64, (z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n);
  z = BigInt.asUintN(64, (z ^ (z >> 27n)) * 0x94d049bb133111ebn);
  return z ^ (z >> 31n);
}

/** What a batch of seeds added up to. */
export interface BatchSummary {
  seeds: number;
  failed: SimResult[];
  violationsByOracle: Record<string, number>;
  faults: Record<string, number>;
  coverage: SimCoverage;
  jobs: number;
  events: number;
  /** The longest drain after faults stopped, in virtual ms. */
  longestDrainMs: number;
}

/** Runs `count` seeds derived from `base`, one after another, and sums what they found. */
export async function runBatch(
  base: bigint,
  count: number,
  options: { mutant?: Mutant; onResult?: (result: SimResult, index: number) => void; stopOnFailure?: boolean } = {},
): Promise<BatchSummary> {
  const summary: BatchSummary = {
    seeds: 0,
    failed: [],
    violationsByOracle: {},
    faults: {},
    coverage: noCoverage(),
    jobs: 0,
    events: 0,
    longestDrainMs: 0,
  };
  for (let i = 0; i < count; i++) {
    const result = await runSimulation(batchSeed(base, i), { mutant: options.mutant });
    summary.seeds += 1;
    summary.jobs += result.jobs;
    summary.events += result.events;
    summary.longestDrainMs = Math.max(summary.longestDrainMs, result.drainedAfterMs ?? 0);
    for (const report of result.oracles) summary.violationsByOracle[report.name] = (summary.violationsByOracle[report.name] ?? 0) + report.violations;
    for (const [kind, n] of Object.entries(result.faults) as [FaultKind, number][]) summary.faults[kind] = (summary.faults[kind] ?? 0) + n;
    for (const key of Object.keys(summary.coverage) as (keyof SimCoverage)[]) summary.coverage[key] += result.coverage[key];
    if (result.violations > 0) summary.failed.push(result);
    options.onResult?.(result, i);
    if (options.stopOnFailure && result.violations > 0) break;
  }
  return summary;
}
