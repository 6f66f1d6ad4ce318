import { describe, it } from '@jest/globals';
import { expectCleanSeeds } from './seed-batch.support.js';

// The CI seed budget is split over two files of 220 seeds each, sized to what the seeds find (see
// docs/simulator.md, "In npm test"): every coverage counter and fault kind is reached in each half,
// and every sabotage mutant's oracle fires in at least 12 seeds. Each half is CPU-bound, about 14 s
// of CPU; the timeout only catches a hang, and leaves room for a loaded machine.
describe('simulator seeds, second half', () => {
  it('runs 220 more seeds with every oracle at zero', () => expectCleanSeeds(0x5eedn, 220), 900_000);
});
