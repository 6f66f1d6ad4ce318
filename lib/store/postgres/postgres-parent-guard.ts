import { isTerminalState, type JobState } from '../../core/index.js';
import { parentsToLookUp, planDependencies, type PlannedJob } from '../dependencies/dependency-plan.js';
import type { NewJob } from '../enqueue-input.js';
import type { PgExecutor } from './pg-executor.js';
import type { GuardedEnqueue } from './queries/parent-guard.sql.js';

/** Tries of the guarded statement before an enqueue falls back to leaving the edge to the sweep. */
const MAX_ROUNDS = 6;
/** Pause between tries inside a caller's transaction, where waiting on a parent's lock could deadlock. */
const RETRY_PAUSE_MS = [2, 5, 10, 20, 40];

export interface ParentGuardQueries {
  enqueue: ((db: PgExecutor, plans: readonly PlannedJob[]) => Promise<Set<string>>) & {
    guarded(db: PgExecutor, plans: readonly PlannedJob[], guard: readonly string[]): Promise<GuardedEnqueue>;
  };
  jobStates(db: PgExecutor, ids: readonly string[]): Promise<Map<string, JobState>>;
  waitForParent(db: PgExecutor, id: string): Promise<JobState | undefined>;
}

/**
 * Inserts a batch so that a dependant never misses a parent that finishes at the same moment
 * (see parent-guard.sql.ts for the locks). The first try assumes the parents outside the batch
 * are still to finish, the usual case, and costs one statement; a parent that has finished, is
 * unknown, or is being finished right now makes the statement write nothing, and the batch is
 * planned again from what it saw.
 *
 * `autocommit` says each statement commits on its own. Then the enqueue holds no lock between
 * statements and may wait for the writer of a parent. Inside a caller's transaction it holds the
 * parents it already locked, so it never waits on another: it pauses and tries again, and after
 * {@link MAX_ROUNDS} it plans from the parents' committed states and inserts without the guard,
 * which leaves at worst an edge for the maintenance sweep to settle.
 *
 * A sequence's tail that failed for good, or that ended still in line (`inLine`), is terminal, so
 * it is not guarded: its edge is written open, and the write that ends the block (a replay's end,
 * a cancel, the end of the job before it) settles it. One that commits between the enqueue's read
 * and its commit leaves that edge for the sweep.
 */
export async function insertWithParentGuard(
  db: PgExecutor,
  jobs: readonly NewJob[],
  sql: ParentGuardQueries,
  autocommit: boolean,
  known: ReadonlyMap<string, JobState> = new Map(),
  inLine: ReadonlySet<string> = new Set(),
): Promise<Set<string>> {
  const lookUp = parentsToLookUp(jobs);
  if (lookUp.length === 0) return sql.enqueue(db, planDependencies(jobs, new Map(), inLine));
  // Parents outside the batch are assumed open until the guard says otherwise, but for those whose
  // state the caller just read (`known`: a sequence's tail). A parent in the batch under a
  // caller-chosen id may be stored already, and then it is the stored job that counts
  // (planDependencies), so those are looked up first.
  const inBatch = new Set(jobs.map((job) => job.id));
  const states = new Map<string, JobState>(lookUp.filter((id) => !inBatch.has(id)).map((id) => [id, known.get(id) ?? 'scheduled']));
  const inside = lookUp.filter((id) => inBatch.has(id));
  if (inside.length > 0) for (const [id, state] of await sql.jobStates(db, inside)) states.set(id, state);
  const external = [...states.keys()];
  if (external.length === 0) return sql.enqueue(db, planDependencies(jobs, states, inLine));
  for (let round = 0; round < MAX_ROUNDS; round++) {
    // Throws for a parent that does not exist, before anything is written.
    const plans = planDependencies(jobs, states, inLine);
    const open = external.filter((id) => !isTerminalState(states.get(id)!));
    if (open.length === 0) return sql.enqueue(db, plans);
    const result = await sql.enqueue.guarded(db, plans, open);
    if (result.ok) return result.ids;
    for (const [id, state] of result.locked) states.set(id, state);
    if (round === MAX_ROUNDS - 1) break;
    if (!autocommit) await pause(RETRY_PAUSE_MS[round]!);
    for (const id of open.filter((parent) => !result.locked.has(parent))) {
      const state = autocommit ? await sql.waitForParent(db, id) : (await sql.jobStates(db, [id])).get(id);
      if (state === undefined) states.delete(id);
      else states.set(id, state);
    }
  }
  return sql.enqueue(db, planDependencies(jobs, await sql.jobStates(db, lookUp), inLine));
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
