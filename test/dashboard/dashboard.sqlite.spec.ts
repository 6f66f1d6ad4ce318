import { describe } from '@jest/globals';
import { sqliteTarget } from '../support/targets/sqlite.target.js';
import { runDashboardCases } from './dashboard.cases.js';

describe('dashboard: sqlite', () => runDashboardCases(sqliteTarget));
