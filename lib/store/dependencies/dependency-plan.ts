import { ALL_PARENTS_SUCCEEDED, InvalidArgumentError, isDeadLetterState, isTerminalState, type JobState } from '../../core/index.js';
import type { NewJob } from '../enqueue-input.js';

const NO_IDS: ReadonlySet<string> = new Set();

/** How a new job starts, given the states its parents are in right now. */
export interface PlannedJob {
  readonly job: NewJob;
  readonly state: 'scheduled' | 'awaiting_parents' | 'cancelled';
  /** Parents still to finish (the latch). */
  readonly pendingParents: number;
  /**
   * Set when a parent already failed for good and the job waits `on_success`, and when an
   * `on_failure` job is cancelled because every parent succeeded ({@link ALL_PARENTS_SUCCEEDED}).
   */
  readonly lastError: string | null;
  /** An `on_failure` job's memory that a settled parent did not succeed: what releases it at its latch's end. */
  readonly parentFailed: boolean;
  /** Each edge, settled at once when its parent is already terminal (see {@link PlannedEdge}). */
  readonly edges: readonly PlannedEdge[];
}

/**
 * An edge to write. A sequence edge (`sequence` set, to the job's `afterFailure`) releases its
 * child however the parent ends, and never cancels it. It stays open while the parent is in line:
 * ended without running (cancelled) while its own sequence edge is open, so the child waits for
 * the job before the parent too. Under `block` a parent that failed for good leaves it open until
 * an operator replays that parent (whose end settles it) or cancels it.
 */
export interface PlannedEdge {
  readonly parentId: string;
  readonly settled: boolean;
  readonly sequence?: 'block' | 'continue';
}

/** The parents a job waits for: its `dependsOn`, and its sequence predecessor unless that is one of them. */
export function parentsOf(job: NewJob): readonly string[] {
  const given = job.dependsOn ?? [];
  return job.sequenceAfter === undefined || given.includes(job.sequenceAfter) ? given : [...given, job.sequenceAfter];
}

/** True when an edge in `mode` stays open at a parent in `state`: a failure that blocks the sequence. */
export function blocksSequence(mode: PlannedEdge['sequence'], state: JobState): boolean {
  return mode === 'block' && isDeadLetterState(state);
}

/** True when the parent's end releases (rather than cancels) a dependant in `mode`. */
function satisfies(parentState: JobState, mode: NewJob['dependencyMode']): boolean {
  return parentState === 'succeeded' || mode === 'on_any_terminal' || mode === 'on_failure';
}



/**
 * Checks a whole batch's dependency graph, as the caller wrote it, and decides how each job starts.
 * The batch's own edges must form no cycle, whether or not some of its ids are already stored, so
 * every store gives a cyclic batch the same answer. Each parent must be in the batch or in the
 * store (`stored`, with its current state). A parent that is both is the stored job, since the
 * batch's copy of it writes nothing. Runs before anything is written, in time linear in the jobs
 * and edges. The plans come in the batch's order; a store inserts those whose id is new.
 * `inLine` names the stored jobs among `stored` that are terminal but still in line in their
 * sequence (see {@link PlannedEdge}).
 */
export function planDependencies(jobs: readonly NewJob[], stored: ReadonlyMap<string, JobState>, inLine: ReadonlySet<string> = NO_IDS): PlannedJob[] {
  if (jobs.every((job) => parentsOf(job).length === 0)) return jobs.map(independent);
  const inBatch = new Map(jobs.map((job) => [job.id, job]));
  const order = parentsFirst(jobs, inBatch);
  for (const job of jobs) {
    for (const parent of job.dependsOn ?? []) {
      if (!inBatch.has(parent) && !stored.has(parent)) {
        throw new InvalidArgumentError(`Job ${job.id} depends on ${parent}, which does not exist.`, 'dependsOn');
      }
    }
  }
  const planned = new Map<string, PlannedJob>();
  for (const job of order) {
    const edges: PlannedEdge[] = [];
    let pending = 0;
    let failure: string | null = null;
    let parentFailed = false;
    for (const parentId of job.dependsOn ?? []) {
      const parentState = stored.get(parentId) ?? planned.get(parentId)?.state;
      const terminal = parentState !== undefined && isTerminalState(parentState as JobState);
      edges.push({ parentId, settled: terminal });
      if (!terminal) pending += 1;
      else if (!satisfies(parentState as JobState, job.dependencyMode)) failure ??= `parent ${parentId} ended ${parentState}`;
      else if (parentState !== 'succeeded' && job.dependencyMode === 'on_failure') parentFailed = true;
    }
    const after = job.sequenceAfter;
    // A predecessor that is gone (retention deleted it, long finished) leaves nothing to wait for.
    if (after !== undefined && !(job.dependsOn ?? []).includes(after) && (inBatch.has(after) || stored.has(after))) {
      const mode = job.sequence?.afterFailure ?? 'block';
      const parentState = stored.get(after) ?? planned.get(after)?.state;
      // A predecessor that ended without running (cancelled) while its own turn had not come is still in line.
      const waits = stored.has(after) ? inLine.has(after) : (planned.get(after)?.edges.some((edge) => edge.sequence !== undefined && !edge.settled) ?? false);
      const settled = parentState !== undefined && isTerminalState(parentState) && !waits && !blocksSequence(mode, parentState);
      edges.push({ parentId: after, settled, sequence: mode });
      if (!settled) pending += 1;
    }
    // An on_failure job whose parents all ended, none failed, is cancelled like one a failure cancels.
    if (failure === null && pending === 0 && job.dependencyMode === 'on_failure' && !parentFailed) failure = ALL_PARENTS_SUCCEEDED;
    planned.set(job.id, {
      job,
      state: failure !== null ? 'cancelled' : pending > 0 ? 'awaiting_parents' : 'scheduled',
      pendingParents: failure !== null ? 0 : pending,
      lastError: failure,
      parentFailed,
      edges,
    });
  }
  return jobs.map((job) => planned.get(job.id)!);
}

/**
 * Refuses a batch whose own edges form a cycle, as the caller wrote it. Stores call it before unique
 * keys drop or remap jobs, so a cyclic batch gets the same answer whatever is stored.
 */
export function assertAcyclic(jobs: readonly NewJob[]): void {
  if (jobs.some((job) => parentsOf(job).length > 0)) parentsFirst(jobs, new Map(jobs.map((job) => [job.id, job])));
}

function independent(job: NewJob): PlannedJob {
  return { job, state: 'scheduled', pendingParents: 0, lastError: null, parentFailed: false, edges: [] };
}

/**
 * The batch with parents before children (Kahn's algorithm over the edges inside the batch), in a
 * loop rather than by recursion, so a chain of any length listed child-first fits. A cycle is refused.
 */
function parentsFirst(jobs: readonly NewJob[], inBatch: ReadonlyMap<string, NewJob>): NewJob[] {
  const waitingOn = new Map<string, number>();
  const children = new Map<string, NewJob[]>();
  const order: NewJob[] = [];
  for (const job of jobs) {
    let count = 0;
    for (const parent of parentsOf(job)) {
      if (!inBatch.has(parent)) continue;
      count += 1;
      const list = children.get(parent);
      if (list) list.push(job);
      else children.set(parent, [job]);
    }
    waitingOn.set(job.id, count);
    if (count === 0) order.push(job);
  }
  for (let i = 0; i < order.length; i++) {
    for (const child of children.get(order[i]!.id) ?? []) {
      const left = waitingOn.get(child.id)! - 1;
      waitingOn.set(child.id, left);
      if (left === 0) order.push(child);
    }
  }
  if (order.length < jobs.length) throw cycleError(jobs, inBatch, waitingOn);
  return order;
}

/**
 * Names one cycle among the jobs Kahn's algorithm could not order. Each of them waits on a parent
 * that is also unordered, so following such parents from any of them must come back round.
 */
function cycleError(jobs: readonly NewJob[], inBatch: ReadonlyMap<string, NewJob>, waitingOn: ReadonlyMap<string, number>): InvalidArgumentError {
  const stuck = (id: string) => (waitingOn.get(id) ?? 0) > 0;
  const path: string[] = [];
  const seenAt = new Map<string, number>();
  let id = jobs.find((job) => stuck(job.id))!.id;
  while (!seenAt.has(id)) {
    seenAt.set(id, path.length);
    path.push(id);
    id = parentsOf(inBatch.get(id)!).find((parent) => inBatch.has(parent) && stuck(parent))!;
  }
  const cycle = path.slice(seenAt.get(id));
  const shown = cycle.length <= 5 ? cycle : [...cycle.slice(0, 3), '…', cycle.at(-1)!];
  const size = cycle.length <= 5 ? '' : ` of ${cycle.length} jobs`;
  return new InvalidArgumentError(`dependsOn forms a cycle${size}: ${[...shown, cycle[0]].join(' -> ')}.`, 'dependsOn');
}

/**
 * The parents a batch names that the store must look up: those outside the batch, and those in it
 * under an id the caller chose, which may already be stored (a store-generated id never is).
 */
export function parentsToLookUp(jobs: readonly NewJob[]): string[] {
  const inBatch = new Map(jobs.map((job) => [job.id, job]));
  const ids = new Set<string>();
  for (const job of jobs) {
    for (const parent of parentsOf(job)) if (inBatch.get(parent)?.freshId !== true) ids.add(parent);
  }
  return [...ids];
}
