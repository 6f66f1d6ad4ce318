import { describe } from '@jest/globals';
import { mysqlTarget } from '../support/targets/mysql.target.js';
import { runCarriedOutcomeCases } from '../worker/carried-outcomes.cases.js';

describe('which statement outcomes leave in: mariadb', () => runCarriedOutcomeCases(() => mysqlTarget()));
