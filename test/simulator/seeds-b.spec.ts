import { describe, it } from '@jest/globals';
import { expectCleanSeeds } from './seed-batch.support.js';

describe('simulator seeds, second half', () => {
  it('runs 500 more seeds with every oracle at zero', () => expectCleanSeeds(0x5eedn, 500), 300_000);
});
