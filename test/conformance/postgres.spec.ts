import { describe } from '@jest/globals';
import { postgresTarget } from '../support/targets/postgres.target.js';
import { runConformanceSuite } from '../../lib/store-kit/conformance/index.js';

describe('JobStore conformance: postgres', () => runConformanceSuite(postgresTarget));
