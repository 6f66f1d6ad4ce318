import { describe } from '@jest/globals';
import { sqliteTarget } from '../support/targets/sqlite.target.js';
import { runConformanceSuite } from '../../lib/store-kit/conformance/conformance-suite.js';

describe('JobStore conformance: sqlite', () => runConformanceSuite(sqliteTarget));
