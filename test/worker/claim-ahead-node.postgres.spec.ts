import { describe } from '@jest/globals';
import { postgresTarget } from '../support/targets/postgres.target.js';
import { runClaimAheadNodeCases } from './claim-ahead-node.cases.js';

describe('a node claiming ahead: postgres', () => runClaimAheadNodeCases(postgresTarget));
