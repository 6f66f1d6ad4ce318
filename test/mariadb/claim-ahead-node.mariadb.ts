import { describe } from '@jest/globals';
import { mysqlTarget } from '../support/targets/mysql.target.js';
import { runClaimAheadNodeCases } from '../worker/claim-ahead-node.cases.js';

describe('a node claiming ahead: mariadb', () => runClaimAheadNodeCases(() => mysqlTarget()));
