import { describe } from '@jest/globals';
import { memoryTarget } from '../support/targets/memory.target.js';
import { runBatchHandlerNodeCases } from './batch-handler-node.cases.js';

describe('batch handlers on a node: memory', () => runBatchHandlerNodeCases(memoryTarget));
