import { describe, expect, it } from '@jest/globals';
import type { DependencyMode, JobRecord, JobState } from '../../lib/core/index.js';
import type { EdgeJob, HistoryEntry, JobEdges } from '../../lib/store/index.js';
import { checkReleases, type ReleaseStore } from '../../lib/verify/dependency-order.js';

const CHILD = '01900000-0000-7000-8000-0000000000c1';
const parentId = (n: number) => `01900000-0000-7000-8000-00000000000${n}`;

let nextId = 1;
const entry = (jobId: string, state: JobState, atS: number): HistoryEntry => {
  const id = nextId++;
  return { id, position: String(id), jobId, name: 'n', at: new Date(atS * 1_000), state, attempt: 0, error: null, workerId: null, leaseUntil: null };
};

interface Parent {
  readonly sequence?: 'block' | 'continue';
  /** The parent's history as `state@seconds`. */
  readonly history: string[];
}

/**
 * A store that holds one dependant of `mode` and its parents: only what checkReleases reads. A
 * parent's creation is its first entry's time, unless `trimmed` says its history was cut since.
 */
function store(mode: DependencyMode | null, parents: Parent[], options: { gone?: boolean; truncated?: boolean; trimmed?: boolean } = {}): ReleaseStore {
  nextId = 1;
  const edges: JobEdges = {
    parents: parents.map((p, i) => ({ id: parentId(i + 1), name: 'p', queue: 'q', state: 'succeeded', settled: true, satisfied: true, sequence: p.sequence ?? null, traceContext: null }) as EdgeJob),
    parentsTruncated: options.truncated ?? false,
    dependants: [],
    dependantsTruncated: false,
  };
  const histories = new Map(
    parents.map((p, i) => [
      parentId(i + 1),
      p.history.map((step) => {
        const [state, at] = step.split('@');
        return entry(parentId(i + 1), state as JobState, Number(at));
      }),
    ]),
  );
  return {
    jobGet: async ({ jobId }) => {
      if (jobId === CHILD) return options.gone ? null : ({ id: CHILD, dependencyMode: mode } as unknown as JobRecord);
      const first = histories.get(jobId)?.[0];
      return first ? ({ id: jobId, createdAt: new Date(first.at.getTime() - (options.trimmed ? 60_000 : 0)) } as unknown as JobRecord) : null;
    },
    jobEdges: async () => edges,
    jobHistory: async ({ jobId }) => histories.get(jobId) ?? [],
  };
}

/** The release at 10 s; logged after every parent entry, or, with `loggedFirst`, before them all. */
const judge = (s: ReleaseStore, loggedFirst = false) => {
  const release = entry(CHILD, 'scheduled', 10);
  return checkReleases(s, [{ jobId: CHILD, entry: loggedFirst ? { ...release, id: 0 } : release }]);
};
const rules = async (s: ReleaseStore, loggedFirst = true) => {
  const found = await judge(s, loggedFirst);
  return { judged: found.judged, unjudged: found.unjudged, messages: found.violations.map((v) => v.message.replace(/01900000-0000-7000-8000-0000000000/g, '')) };
};

describe('issue 40: a dependant released only once its parents ended as it waits for', () => {
  it('passes releases the modes allow, a parent ending in the release\'s own statement included', async () => {
    expect(await rules(store('on_success', [{ history: ['scheduled@1', 'running@2', 'succeeded@10'] }]))).toEqual({ judged: 1, unjudged: 0, messages: [] });
    expect(await rules(store('on_any_terminal', [{ history: ['scheduled@1', 'running@2', 'dead_lettered@5'] }]))).toEqual({ judged: 1, unjudged: 0, messages: [] });
    expect(await rules(store('on_failure', [{ history: ['succeeded@3'] }, { history: ['cancelled@4'] }]))).toEqual({ judged: 1, unjudged: 0, messages: [] });
    expect(await rules(store(null, [{ sequence: 'continue', history: ['dead_lettered@3'] }]))).toEqual({ judged: 1, unjudged: 0, messages: [] });
    expect(await rules(store(null, [{ sequence: 'block', history: ['dead_lettered@3', 'cancelled@9'] }]))).toEqual({ judged: 1, unjudged: 0, messages: [] });
    // A parent replayed after the release is judged by the end before it.
    expect(await rules(store('on_success', [{ history: ['succeeded@5', 'scheduled@20', 'running@21'] }]))).toEqual({ judged: 1, unjudged: 0, messages: [] });
  });

  it('passes a parent whose end settled its edge and that was replayed before the release (a job\'s first end decides)', async () => {
    const replayed = { history: ['scheduled@1', 'running@2', 'dead_lettered@3', 'scheduled@4', 'running@5'] };
    expect(await rules(store('on_any_terminal', [replayed, { history: ['succeeded@10'] }]))).toEqual({ judged: 1, unjudged: 0, messages: [] });
    expect(await rules(store('on_failure', [{ history: ['dead_lettered@3', 'scheduled@4', 'running@5', 'succeeded@6'] }, { history: ['succeeded@10'] }]))).toEqual({
      judged: 1,
      unjudged: 0,
      messages: [],
    });
  });

  it('passes a release stamped before a co-parent\'s end it waited for, when its entry was logged after that end', async () => {
    // PostgreSQL stamps the release with its statement's start; the co-parent ended while it waited for the row.
    expect(await rules(store('on_success', [{ history: ['scheduled@1', 'running@2', 'succeeded@11'] }]), false)).toEqual({ judged: 1, unjudged: 0, messages: [] });
  });

  it('names a release before a parent ended as the dependant waits for', async () => {
    expect((await rules(store('on_success', [{ history: ['scheduled@1', 'running@2', 'succeeded@11'] }]))).messages).toEqual([
      'Job c1 was released (entry 0) while its parent 01 was running (entry 2), and it had not ended as the dependant waits for.',
    ]);
    expect((await rules(store('on_success', [{ history: ['scheduled@1', 'running@2', 'dead_lettered@3'] }]))).messages).toHaveLength(1);
    expect((await rules(store(null, [{ sequence: 'block', history: ['scheduled@1', 'running@2', 'dead_lettered@3'] }]))).messages).toEqual([
      expect.stringMatching(/while its parent 01 was dead lettered/),
    ]);
  });

  it('counts a release it cannot judge: the dependant gone, too many parents, a parent history trimmed since, an on_failure dependant with no failed parent in sight', async () => {
    expect(await rules(store('on_success', [{ history: ['succeeded@1'] }], { gone: true }))).toEqual({ judged: 0, unjudged: 1, messages: [] });
    expect(await rules(store('on_success', [{ history: ['succeeded@1'] }], { truncated: true }))).toEqual({ judged: 0, unjudged: 1, messages: [] });
    expect(await rules(store('on_success', [{ history: ['running@8'] }], { trimmed: true }))).toEqual({ judged: 0, unjudged: 1, messages: [] });
    expect(await rules(store('on_failure', [{ history: ['succeeded@3'] }, { history: ['succeeded@4'] }]))).toEqual({ judged: 0, unjudged: 1, messages: [] });
  });
});
