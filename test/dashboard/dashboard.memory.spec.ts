import { describe } from '@jest/globals';
import { memoryTarget } from '../support/targets/memory.target.js';
import { runDashboardCases } from './dashboard.cases.js';

describe('dashboard: memory', () => runDashboardCases(memoryTarget));
