import { describe, it } from '@jest/globals';
import { expectCleanSeeds } from './seed-batch.support.js';

// The CI seed budget is split over two files. Each half is CPU-bound, about 45 s on a quiet
// 2-core machine; the timeout only catches a hang, and leaves room for a loaded machine.
describe('simulator seeds, second half', () => {
  it('runs 500 more seeds with every oracle at zero', () => expectCleanSeeds(0x5eedn, 500), 900_000);
});
