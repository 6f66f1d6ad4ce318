import { describe, it } from '@jest/globals';
import { expectCleanSeeds } from './seed-batch.support.js';

// The CI seed budget is split over two files so that each stays well inside its timeout.
describe('simulator seeds, first half', () => {
  it('runs 500 seeds with every oracle at zero', () => expectCleanSeeds(0n, 500), 300_000);
});
