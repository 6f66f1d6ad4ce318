import { describe } from '@jest/globals';
import { postgresTarget } from '../support/targets/postgres.target.js';
import { runConformanceSuite } from '../../lib/store-kit/conformance/conformance-suite.js';

describe('JobStore conformance: postgres', () => runConformanceSuite(postgresTarget));
