import { isTerminalState, type JobState } from '../core/index.js';
import type { EdgeJob, HistoryEntry, OperatorStore } from '../store/index.js';
import type { VerifyViolation } from './history-rules.js';

/** A dependant's release: the entry that moved it from awaiting_parents to scheduled. */
export interface Release {
  readonly jobId: string;
  readonly entry: HistoryEntry;
}

/** What judging a set of releases found. */
export interface ReleaseCheck {
  /** Releases judged against every parent's state at that moment. */
  judged: number;
  /** Releases that could not be judged: the dependant or a parent is gone, or its history no longer reaches back. */
  unjudged: number;
  readonly violations: VerifyViolation[];
}

export type ReleaseStore = Pick<OperatorStore, 'jobGet' | 'jobEdges' | 'jobHistory'>;

/** Parents a dependant's edges are read with; one with more is counted as not judged. */
const PARENTS_READ = 1_000;

const show = (state: JobState) => state.replace(/_/g, ' ');

/**
 * The states a parent must be in for its edge to release a dependant, by edge and mode
 * (docs/dependencies.md, docs/sequences.md): a `dependsOn` parent of an `on_success` dependant
 * succeeded; a `block` sequence's parent succeeded or was discarded; any other parent ended.
 */
function releases(edge: EdgeJob, mode: string | null): (state: JobState) => boolean {
  if (edge.sequence === 'block') return (state) => state === 'succeeded' || state === 'cancelled';
  if (edge.sequence === null && (mode === null || mode === 'on_success')) return (state) => state === 'succeeded';
  return isTerminalState;
}

/**
 * Judges each release against its parents' own histories: at the instant of the release, every
 * parent was in a state that releases it, and an `on_failure` dependant had a parent that did not
 * succeed. A parent's state at an instant is its last entry stamped at or before it (a parent's end
 * and the release it causes share their statement's time). Reads, per dependant, its row, its edges
 * and each parent's history; one dependant at a time, so memory holds one dependant's parents.
 */
export async function checkReleases(store: ReleaseStore, list: readonly Release[]): Promise<ReleaseCheck> {
  const result: ReleaseCheck = { judged: 0, unjudged: 0, violations: [] };
  for (const { jobId, entry } of list) {
    const [job, edges] = await Promise.all([store.jobGet({ jobId }), store.jobEdges({ jobId, limit: PARENTS_READ })]);
    if (job === null || edges === null || edges.parentsTruncated || edges.parents.length === 0) {
      result.unjudged += 1;
      continue;
    }
    let known = true;
    let failedParent = false;
    const found: VerifyViolation[] = [];
    for (const parent of edges.parents) {
      const history = await store.jobHistory({ jobId: parent.id });
      const then = history.filter((e) => e.at <= entry.at).at(-1);
      if (then === undefined) {
        known = false;
        continue;
      }
      if (parent.sequence === null && then.state !== 'succeeded') failedParent = true;
      if (!releases(parent, job.dependencyMode)(then.state)) {
        found.push({
          rule: 'early_release',
          jobId,
          entryIds: [then.id, entry.id],
          message: `Job ${jobId} was released (entry ${entry.id}) while its parent ${parent.id} was ${show(then.state)} (entry ${then.id}).`,
        });
      }
    }
    if (known && job.dependencyMode === 'on_failure' && !failedParent && edges.parents.some((p) => p.sequence === null)) {
      found.push({ rule: 'early_release', jobId, entryIds: [entry.id], message: `Job ${jobId}, an on_failure dependant, was released (entry ${entry.id}) though every parent had succeeded.` });
    }
    if (found.length > 0) result.violations.push(...found);
    if (known || found.length > 0) result.judged += 1;
    else result.unjudged += 1;
  }
  return result;
}
