import { describe, expect, it } from '@jest/globals';
import { batchSeed, mutantNamed, runSimulation } from '../../lib/simulator/index.js';

/**
 * verifyHistory (docs/verify.md) over the store each simulated run leaves behind: the production
 * checker, reading only what the store recorded, agrees with the oracles that watched the run.
 */
describe('issue 40: verify over the simulator\'s stores', () => {
  it('finds nothing in the history of clean runs, and says how much it checked', async () => {
    for (let i = 0; i < 10; i++) {
      const { settings, violations, history } = await runSimulation(batchSeed(0n, i));
      expect({ seed: settings.seed.toString(16), violations, history: history.violations }).toEqual({ seed: settings.seed.toString(16), violations: 0, history: 0 });
      expect(history.entries).toBeGreaterThan(history.jobs);
    }
  }, 300_000);

  it.each([
    ['reclaim_without_state_check', 'terminal_left'],
    ['batch_callback_early', 'illegal_transition'],
    // An outcome write that ignores the lease: a late report lands after its deadline.
    ['no_fence', 'stale_lease'],
    // A refused report still settles the dependants: one is released while its parent runs on.
    ['latch_on_stale_write', 'early_release'],
    // A slot given back before the outcome, or a limit change that forgets the jobs running: a claim over the cap.
    ['slot_released_early', 'limit_exceeded'],
    ['limit_change_forgets_running', 'limit_exceeded'],
    // A claim that ignores the rate: one start too many in a window.
    ['rate_limit_ignored', 'rate_exceeded'],
    // An enqueue that writes a job whose unique key an unfinished job holds.
    ['unique_key_ignored', 'unique_key_twice'],
  ])('finds %s from the history alone (%s)', async (name, rule) => {
    const mutant = mutantNamed(name);
    const rules = new Set<string>();
    for (let i = 0; i < 20 && rules.size === 0; i++) for (const found of (await runSimulation(batchSeed(0n, i), { mutant })).history.rules) rules.add(found);
    expect([...rules]).toContain(rule);
  }, 300_000);
});
