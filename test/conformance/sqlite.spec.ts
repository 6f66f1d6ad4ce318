import { describe } from '@jest/globals';
import { sqliteTarget } from '../support/targets/sqlite.target.js';
import { runConformanceSuite } from './conformance-suite.js';

describe('JobStore conformance: sqlite', () => runConformanceSuite(sqliteTarget));
