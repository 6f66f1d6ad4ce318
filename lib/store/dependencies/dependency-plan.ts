import { InvalidArgumentError, isTerminalState, type JobState } from '../../core/index.js';
import type { NewJob } from '../enqueue-input.js';

/** How a new job starts, given the states its parents are in right now. */
export interface PlannedJob {
  readonly job: NewJob;
  readonly state: 'scheduled' | 'awaiting_parents' | 'cancelled';
  /** Parents still to finish (the latch). */
  readonly pendingParents: number;
  /** Set when a parent already failed for good and the job waits `on_success`. */
  readonly lastError: string | null;
  /** Each edge, settled at once when its parent is already terminal. */
  readonly edges: readonly { readonly parentId: string; readonly settled: boolean }[];
}

/** True when the parent's end releases (rather than cancels) a dependant in `mode`. */
function satisfies(parentState: JobState, mode: NewJob['dependencyMode']): boolean {
  return parentState === 'succeeded' || mode === 'on_any_terminal';
}

/**
 * Checks a batch's dependency graph and decides how each job starts. Parents must exist, either in
 * the store (`existing`, with their current state) or anywhere in the same batch; the
 * graph among the batch must have no cycle. All of this runs before anything is written.
 */
export function planDependencies(jobs: readonly NewJob[], existing: ReadonlyMap<string, JobState>): PlannedJob[] {
  if (jobs.every((job) => (job.dependsOn?.length ?? 0) === 0)) return jobs.map(independent);
  const inBatch = new Map(jobs.map((job) => [job.id, job]));
  for (const job of jobs) {
    for (const parent of job.dependsOn ?? []) {
      if (!inBatch.has(parent) && !existing.has(parent)) {
        throw new InvalidArgumentError(`Job ${job.id} depends on ${parent}, which does not exist.`, 'dependsOn');
      }
    }
  }
  const order = topologicalOrder(jobs, inBatch);
  const planned = new Map<string, PlannedJob>();
  for (const job of order) {
    const edges: { parentId: string; settled: boolean }[] = [];
    let pending = 0;
    let failure: string | null = null;
    for (const parentId of job.dependsOn ?? []) {
      const parentState = existing.get(parentId) ?? planned.get(parentId)?.state;
      const terminal = parentState !== undefined && isTerminalState(parentState as JobState);
      edges.push({ parentId, settled: terminal });
      if (!terminal) pending += 1;
      else if (!satisfies(parentState as JobState, job.dependencyMode)) failure ??= `parent ${parentId} ended ${parentState}`;
    }
    planned.set(job.id, {
      job,
      state: failure !== null ? 'cancelled' : pending > 0 ? 'awaiting_parents' : 'scheduled',
      pendingParents: failure !== null ? 0 : pending,
      lastError: failure,
      edges,
    });
  }
  return jobs.map((job) => planned.get(job.id)!);
}

function independent(job: NewJob): PlannedJob {
  return { job, state: 'scheduled', pendingParents: 0, lastError: null, edges: [] };
}

/** Parents before children within the batch; a cycle is refused. */
function topologicalOrder(jobs: readonly NewJob[], inBatch: ReadonlyMap<string, NewJob>): NewJob[] {
  const order: NewJob[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (job: NewJob, path: string[]) => {
    const mark = state.get(job.id);
    if (mark === 'done') return;
    if (mark === 'visiting') {
      const cycle = [...path.slice(path.indexOf(job.id)), job.id];
      throw new InvalidArgumentError(`dependsOn forms a cycle: ${cycle.join(' -> ')}.`, 'dependsOn');
    }
    state.set(job.id, 'visiting');
    for (const parent of job.dependsOn ?? []) {
      const parentJob = inBatch.get(parent);
      if (parentJob) visit(parentJob, [...path, job.id]);
    }
    state.set(job.id, 'done');
    order.push(job);
  };
  for (const job of jobs) visit(job, []);
  return order;
}

/** The parents a batch names that are not in the batch itself: those the store must look up. */
export function externalParents(jobs: readonly NewJob[]): string[] {
  const inBatch = new Set(jobs.map((job) => job.id));
  return [...new Set(jobs.flatMap((job) => job.dependsOn ?? []).filter((id) => !inBatch.has(id)))];
}
