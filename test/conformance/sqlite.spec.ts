import { describe } from '@jest/globals';
import { sqliteTarget } from '../support/targets/sqlite.target.js';
import { runConformanceSuite } from '../../lib/store-kit/conformance/index.js';

describe('JobStore conformance: sqlite', () => runConformanceSuite(sqliteTarget));
