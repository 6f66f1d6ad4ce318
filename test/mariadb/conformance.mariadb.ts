import { describe } from '@jest/globals';
import { runConformanceSuite } from '../../lib/store-kit/conformance/index.js';
import { mysqlTarget } from '../support/targets/mysql.target.js';

describe('JobStore conformance: mariadb', () => runConformanceSuite(() => mysqlTarget()));
