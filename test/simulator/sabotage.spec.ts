import { describe, expect, it } from '@jest/globals';
import { batchSeed, MUTANTS, runSimulation } from '../../lib/simulator/index.js';

/** Seeds each mutant may take to be caught; the CI run fails if one survives them all. */
const BUDGET = 200;
/** The oracles whose mutants must trip no other oracle. */
const ALONE = new Set(['sequence_order', 'batch_callbacks', 'batch_handler_calls']);

describe('sabotage self-test: every deliberately broken rule trips its oracle', () => {
  it.each(MUTANTS.map((m) => [m.name, m] as const))('%s is caught', async (_name, mutant) => {
    let caughtAt: number | null = null;
    let seen = 0;
    for (let i = 0; i < BUDGET && caughtAt === null; i++) {
      const result = await runSimulation(batchSeed(0n, i), { mutant });
      seen = i + 1;
      const oracle = result.oracles.find((o) => o.name === mutant.caughtBy)!;
      if (oracle.violations > 0) caughtAt = i;
    }
    expect({ mutant: mutant.name, oracle: mutant.caughtBy, caught: caughtAt !== null, seeds: seen }).toMatchObject({ caught: true });
  }, 300_000);

  it.each(MUTANTS.filter((m) => ALONE.has(m.caughtBy)).map((m) => [m.name, m] as const))('%s trips its oracle alone', async (_name, mutant) => {
    // A store that breaks only the order of sequences, or only when batch callbacks run, or an
    // invoker that breaks only how a batch handler's calls are made, breaks nothing another oracle
    // guards.
    let judged = 0;
    for (let i = 0; i < BUDGET && judged < 3; i++) {
      const result = await runSimulation(batchSeed(0n, i), { mutant });
      if (result.oracles.find((o) => o.name === mutant.caughtBy)!.violations === 0) continue;
      judged += 1;
      expect({ seed: i, tripped: result.oracles.filter((o) => o.violations > 0).map((o) => o.name) }).toEqual({ seed: i, tripped: [mutant.caughtBy] });
    }
    expect(judged).toBe(3);
  }, 300_000);

  it('leaves the real rules alone: the same seeds run clean without a mutant', async () => {
    for (let i = 0; i < 20; i++) {
      const result = await runSimulation(batchSeed(0n, i));
      expect({ seed: result.settings.seed.toString(16), violations: result.violations }).toEqual({ seed: result.settings.seed.toString(16), violations: 0 });
    }
  }, 300_000);
});
