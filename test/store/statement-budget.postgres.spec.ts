import { afterAll, beforeAll, describe } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { PostgresJobStore } from '../../lib/store/index.js';
import { dropSchemas, openPostgresDataSource, uniqueSchema } from '../support/postgres.js';
import { statementBudgetCases, statementRecorder, type BudgetTarget } from './statement-budget.cases.js';

const schema = uniqueSchema('budget');
const leanSchema = uniqueSchema('budget');
let dataSource: DataSource;
let target: BudgetTarget;
let lean: BudgetTarget;

/** A store whose first full claim has happened, under a statement counter. */
async function budgetTarget(schema: string, finish: 'keep' | 'lean'): Promise<BudgetTarget> {
  const recorder = statementRecorder();
  const store = new PostgresJobStore({ dataSource, schema, finish, onStatement: recorder.hook });
  await store.migrate();
  // The statistics guard looks at the table after the first full claim (and then at most once a
  // minute), in statements of its own beside the claim's. Its first look happens here, so the
  // budgets below are those of the operations alone; its own cost is pinned in the adapter spec.
  await store.jobEnqueue({ job: { name: 'budget.warm', payload: null, queue: 'warm' } });
  await store.jobClaim({ workerId: 'budget', limit: 1, queues: ['warm'], leaseMs: 60_000 });
  await store.statistics;
  return {
    store,
    count: recorder.count,
    async lapseLeases() {
      await dataSource.query(`UPDATE "${schema}".jobs SET leased_until = now() - interval '1 second' WHERE state = 'running'`);
    },
  };
}

beforeAll(async () => {
  dataSource = await openPostgresDataSource(4);
  target = await budgetTarget(schema, 'keep');
  lean = await budgetTarget(leanSchema, 'lean');
});

afterAll(async () => {
  await target.store.close();
  await lean.store.close();
  await dropSchemas(dataSource, [schema, leanSchema]);
  await dataSource.destroy();
});

// The reference budget is 3 / 5 / 3 / 3 / 2 statements; every hot-path operation here is one
// statement whatever the batch size (the NOTIFY rides inside the enqueue statement). A listing
// page is two in one transaction: the planner settings that pin its plan to the ordered index scan
// whatever the statistics say (list-jobs.query.ts says why), then the page.
describe('statement budget on PostgreSQL', () => {
  statementBudgetCases(() => target, { enqueueOne: 1, claim32: 1, complete32: 1, completeAndClaim32: 1, sweep32: 1, list200: 2 });
});

// The lean finish adds no statement: the outcome write marks its own transaction lean, and the
// effects trigger deletes the successes inside that same statement (postgres-effects.ts).
describe('issue 36 item 4: statement budget on PostgreSQL under the lean finish', () => {
  statementBudgetCases(() => lean, { enqueueOne: 1, claim32: 1, complete32: 1, completeAndClaim32: 1, sweep32: 1, list200: 2 });
});
