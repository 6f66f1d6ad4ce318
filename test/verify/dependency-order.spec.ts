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

/** A store that holds one dependant of `mode`, released at 10 s, and its parents: only what checkReleases reads. */
function store(mode: DependencyMode | null, parents: Parent[], options: { gone?: boolean; truncated?: boolean } = {}): ReleaseStore {
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
    jobGet: async () => (options.gone ? null : ({ id: CHILD, dependencyMode: mode } as unknown as JobRecord)),
    jobEdges: async () => edges,
    jobHistory: async ({ jobId }) => histories.get(jobId) ?? [],
  };
}

const judge = (s: ReleaseStore) => checkReleases(s, [{ jobId: CHILD, entry: entry(CHILD, 'scheduled', 10) }]);
const rules = async (s: ReleaseStore) => {
  const found = await judge(s);
  return { judged: found.judged, unjudged: found.unjudged, messages: found.violations.map((v) => v.message.replace(/01900000-0000-7000-8000-0000000000/g, '')) };
};

describe('issue 40: a dependant released only once its parents ended as it waits for', () => {
  it('passes releases the modes allow, a parent ending in the release\'s own statement included', async () => {
    expect(await rules(store('on_success', [{ history: ['scheduled@1', 'running@2', 'succeeded@10'] }]))).toEqual({ judged: 1, unjudged: 0, messages: [] });
    expect(await rules(store('on_any_terminal', [{ history: ['scheduled@1', 'running@2', 'dead_lettered@5'] }]))).toEqual({ judged: 1, unjudged: 0, messages: [] });
    expect(await rules(store('on_failure', [{ history: ['succeeded@3'] }, { history: ['cancelled@4'] }]))).toEqual({ judged: 1, unjudged: 0, messages: [] });
    expect(await rules(store(null, [{ sequence: 'continue', history: ['dead_lettered@3'] }]))).toEqual({ judged: 1, unjudged: 0, messages: [] });
    expect(await rules(store(null, [{ sequence: 'block', history: ['dead_lettered@3', 'cancelled@9'] }]))).toEqual({ judged: 1, unjudged: 0, messages: [] });
    // A parent replayed after the release is judged by its state then.
    expect(await rules(store('on_success', [{ history: ['succeeded@5', 'scheduled@20', 'running@21'] }]))).toEqual({ judged: 1, unjudged: 0, messages: [] });
  });

  it('names a release before a parent ended as the dependant waits for', async () => {
    expect((await rules(store('on_success', [{ history: ['scheduled@1', 'running@2', 'succeeded@11'] }]))).messages).toEqual([
      'Job c1 was released (entry 4) while its parent 01 was running (entry 2).',
    ]);
    expect((await rules(store('on_success', [{ history: ['dead_lettered@3'] }]))).messages).toHaveLength(1);
    expect((await rules(store(null, [{ sequence: 'block', history: ['dead_lettered@3'] }]))).messages).toEqual([
      expect.stringMatching(/while its parent 01 was dead lettered/),
    ]);
    expect((await rules(store('on_failure', [{ history: ['succeeded@3'] }, { history: ['succeeded@4'] }]))).messages).toEqual([
      expect.stringMatching(/an on_failure dependant, was released \(entry \d+\) though every parent had succeeded\.$/),
    ]);
  });

  it('counts a release it cannot judge: the dependant gone, too many parents, or a parent history that no longer reaches back', async () => {
    expect(await rules(store('on_success', [{ history: ['succeeded@1'] }], { gone: true }))).toEqual({ judged: 0, unjudged: 1, messages: [] });
    expect(await rules(store('on_success', [{ history: ['succeeded@1'] }], { truncated: true }))).toEqual({ judged: 0, unjudged: 1, messages: [] });
    expect(await rules(store('on_success', [{ history: ['scheduled@12'] }]))).toEqual({ judged: 0, unjudged: 1, messages: [] });
  });
});
