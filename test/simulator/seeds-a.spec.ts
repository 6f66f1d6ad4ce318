import { describe, it } from '@jest/globals';
import { expectCleanSeeds } from './seed-batch.support.js';

// The CI seed budget is split over two files, 200 seeds each, sized to what the seeds find (see
// docs/simulator.md, "In npm test"): within each half every coverage counter is reached at least
// three times and every sabotage mutant's oracle fires in at least 12 seeds. Each half is
// CPU-bound, about 14 s of CPU; the timeout only catches a hang, and leaves room for a loaded machine.
describe('simulator seeds, first half', () => {
  it('runs 200 seeds with every oracle at zero', () => expectCleanSeeds(0n, 200), 900_000);
});
