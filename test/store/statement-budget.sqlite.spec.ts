import { afterAll, beforeAll, describe } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { SqliteJobStore } from '../../lib/store/index.js';
import { statementBudgetCases, statementRecorder, type BudgetTarget } from './statement-budget.cases.js';

const dir = mkdtempSync(join(tmpdir(), 'durable-scheduler-budget-'));
let dataSource: DataSource;
let leanDataSource: DataSource;
let target: BudgetTarget;
let lean: BudgetTarget;

/** A store on its own file, under a statement counter. */
async function budgetTarget(file: string, finish: 'keep' | 'lean'): Promise<[DataSource, BudgetTarget]> {
  const recorder = statementRecorder();
  // better-sqlite3 reports every statement it executes to `verbose`.
  const dataSource = await new DataSource({ type: 'better-sqlite3', database: join(dir, file), verbose: (text: unknown) => recorder.hook(String(text)) }).initialize();
  const store = new SqliteJobStore({ dataSource, finish });
  await store.migrate();
  return [
    dataSource,
    {
      store,
      count: recorder.count,
      async lapseLeases() {
        await dataSource.query(`UPDATE ${store.naming.jobs} SET leased_until = leased_until - 120000 WHERE state = 'running'`);
      },
    },
  ];
}

beforeAll(async () => {
  [dataSource, target] = await budgetTarget('budget.db', 'keep');
  [leanDataSource, lean] = await budgetTarget('budget-lean.db', 'lean');
});

afterAll(async () => {
  await dataSource.destroy();
  await leanDataSource.destroy();
  rmSync(dir, { recursive: true, force: true });
});

// SQLite statements are calls into the library in this process, not network round trips, all inside
// one IMMEDIATE transaction. Each operation reads the database clock first; enqueue checks the id
// before inserting; claim and complete look whether limits or open dependency edges exist at all;
// a claim reads its candidates (one priority's range of the claim index, and the lapsed leases)
// before it leases them, so that a priority with only future-dated jobs is never walked;
// the outcome write is one UPDATE per outcome (its triggers apply the effects).
describe('statement budget on SQLite', () => {
  statementBudgetCases(() => target, { enqueueOne: 3, claim32: 4, complete32: 34, completeAndClaim32: 38, sweep32: 3, list200: 1 });
});

// Under the lean finish each success without output first tries its fenced delete, and one that
// deletes its job deletes its history and its own edges after it: three calls for each of the 16
// successes, where keep makes one UPDATE; the 16 failures are one UPDATE each as before. Outcomes
// with a claim are the two calls in turn: 32 successes (98) and the claim (4).
describe('issue 36 item 4: statement budget on SQLite under the lean finish', () => {
  statementBudgetCases(() => lean, { enqueueOne: 3, claim32: 4, complete32: 66, completeAndClaim32: 102, sweep32: 3, list200: 1 });
});
