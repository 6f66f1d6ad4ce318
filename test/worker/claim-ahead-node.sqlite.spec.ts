import { describe } from '@jest/globals';
import { sqliteTarget } from '../support/targets/sqlite.target.js';
import { runClaimAheadNodeCases } from './claim-ahead-node.cases.js';

describe('a node claiming ahead: sqlite', () => runClaimAheadNodeCases(sqliteTarget));
