import { describe } from '@jest/globals';
import { postgresTarget } from '../support/targets/postgres.target.js';
import { runBatchHandlerNodeCases } from './batch-handler-node.cases.js';

describe('batch handlers on a node: postgres', () => runBatchHandlerNodeCases(postgresTarget));
