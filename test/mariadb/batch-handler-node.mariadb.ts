import { describe } from '@jest/globals';
import { mysqlTarget } from '../support/targets/mysql.target.js';
import { runBatchHandlerNodeCases } from '../worker/batch-handler-node.cases.js';

describe('batch handlers on a node: mariadb', () => runBatchHandlerNodeCases(() => mysqlTarget()));
