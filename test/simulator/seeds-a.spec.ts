import { describe, it } from '@jest/globals';
import { expectCleanSeeds } from './seed-batch.support.js';

// The CI seed budget is split over two files. Each half is CPU-bound, about 45 s on a quiet
// 2-core machine; the timeout only catches a hang, and leaves room for a loaded machine.
describe('simulator seeds, first half', () => {
  it('runs 500 seeds with every oracle at zero', () => expectCleanSeeds(0n, 500), 900_000);
});
