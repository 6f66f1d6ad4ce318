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
 * The ends of a parent that release its edge, by edge and mode (docs/dependencies.md,
 * docs/sequences.md): a `dependsOn` parent of an `on_success` dependant succeeded; a `block`
 * sequence's parent succeeded or was discarded; any other parent ended.
 */
function releases(edge: EdgeJob, mode: string | null): (state: JobState) => boolean {
  if (edge.sequence === 'block') return (state) => state === 'succeeded' || state === 'cancelled';
  if (edge.sequence === null && (mode === null || mode === 'on_success')) return (state) => state === 'succeeded';
  return isTerminalState;
}

/** How far a job's first entry may lie from its creation and still be its creation's entry (statement against transaction time). */
const CREATION_SLACK_MS = 1_000;

/**
 * Judges each release against its parents' own histories: every parent had an end that releases
 * its edge before the release. An edge settles once, at the parent's first end after the
 * dependant was written (a parent replayed afterwards does not unsettle it), so any such end
 * before the release will do. Before means stamped no later, or logged earlier: a release can
 * carry its statement's start time, earlier than a co-parent's end it waited for, but its entry is
 * written after that end's. A parent with no such end is a finding only when its history reaches
 * back to its creation; one trimmed since, or purged with its edges, leaves the release unjudged,
 * and so does an `on_failure` dependant whose failed parent cannot be seen. Reads, per dependant,
 * its row, its edges and each parent's history, one dependant at a time.
 */
export async function checkReleases(store: ReleaseStore, list: readonly Release[]): Promise<ReleaseCheck> {
  const result: ReleaseCheck = { judged: 0, unjudged: 0, violations: [] };
  for (const { jobId, entry } of list) {
    const [job, edges] = await Promise.all([store.jobGet({ jobId }), store.jobEdges({ jobId, limit: PARENTS_READ })]);
    if (job === null || edges === null || edges.parentsTruncated || edges.parents.length === 0) {
      result.unjudged += 1;
      continue;
    }
    const before = (e: HistoryEntry) => e.at <= entry.at || e.id < entry.id;
    let known = true;
    let failedParent = false;
    const found: VerifyViolation[] = [];
    for (const parent of edges.parents) {
      const history = await store.jobHistory({ jobId: parent.id });
      const ends = history.filter((e) => before(e) && isTerminalState(e.state));
      if (parent.sequence === null && ends.some((e) => e.state !== 'succeeded')) failedParent = true;
      if (ends.some((e) => releases(parent, job.dependencyMode)(e.state))) continue;
      if (!(await reachesCreation(store, parent.id, history))) {
        known = false;
        continue;
      }
      const then = history.filter(before).at(-1);
      found.push({
        rule: 'early_release',
        jobId,
        entryIds: then === undefined ? [entry.id] : [then.id, entry.id],
        message:
          then === undefined
            ? `Job ${jobId} was released (entry ${entry.id}) before its parent ${parent.id} had any entry.`
            : `Job ${jobId} was released (entry ${entry.id}) while its parent ${parent.id} was ${show(then.state)} (entry ${then.id}), and it had not ended as the dependant waits for.`,
      });
    }
    // A failed parent purged since (a cancelled one, with its edges) cannot be told from none, so
    // an on_failure dependant without one in sight is not judged.
    if (job.dependencyMode === 'on_failure' && !failedParent && found.length === 0) known = false;
    if (found.length > 0) {
      result.violations.push(...found);
      result.judged += 1;
    } else if (known) result.judged += 1;
    else result.unjudged += 1;
  }
  return result;
}

/** Whether a job's history still starts at its creation: trimmed back (historyPerJob) it does not. */
async function reachesCreation(store: ReleaseStore, jobId: string, history: readonly HistoryEntry[]): Promise<boolean> {
  const first = history[0];
  if (first === undefined) return false;
  const row = await store.jobGet({ jobId });
  return row !== null && Math.abs(first.at.getTime() - row.createdAt.getTime()) <= CREATION_SLACK_MS;
}
