import { describe } from '@jest/globals';
import { sqliteTarget } from '../support/targets/sqlite.target.js';
import { runCarriedOutcomeCases } from './carried-outcomes.cases.js';

describe('which statement outcomes leave in: sqlite', () => runCarriedOutcomeCases(sqliteTarget));
