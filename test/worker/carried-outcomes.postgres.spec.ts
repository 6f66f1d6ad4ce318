import { describe } from '@jest/globals';
import { postgresTarget } from '../support/targets/postgres.target.js';
import { runCarriedOutcomeCases } from './carried-outcomes.cases.js';

describe('which statement outcomes leave in: postgres', () => runCarriedOutcomeCases(postgresTarget));
