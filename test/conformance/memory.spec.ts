import { describe } from '@jest/globals';
import { memoryTarget } from '../support/targets/memory.target.js';
import { runConformanceSuite } from '../../lib/store-kit/conformance/index.js';

describe('JobStore conformance: memory', () => runConformanceSuite(memoryTarget));
