import { describe } from '@jest/globals';
import { sqliteTarget } from '../support/targets/sqlite.target.js';
import { runBatchHandlerNodeCases } from './batch-handler-node.cases.js';

describe('batch handlers on a node: sqlite', () => runBatchHandlerNodeCases(sqliteTarget));
