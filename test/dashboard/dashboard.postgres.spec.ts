import { describe } from '@jest/globals';
import { postgresTarget } from '../support/targets/postgres.target.js';
import { runDashboardCases } from './dashboard.cases.js';

describe('dashboard: postgres', () => runDashboardCases(postgresTarget));
