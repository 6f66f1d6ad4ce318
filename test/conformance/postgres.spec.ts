import { describe } from '@jest/globals';
import { postgresTarget } from '../support/targets/postgres.target.js';
import { runConformanceSuite } from './conformance-suite.js';

describe('JobStore conformance: postgres', () => runConformanceSuite(postgresTarget));
