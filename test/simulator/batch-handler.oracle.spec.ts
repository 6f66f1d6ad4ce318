import { describe, expect, it } from '@jest/globals';
import { batchSeed, BatchHandlerOracle, deriveSettings, runSimulation, SIM_BATCH_HANDLER_JOB, type RowView, type SimEvent } from '../../lib/simulator/index.js';
import { call, feed, row, running, T0, worker, write } from './history-builder.js';

const NAME = SIM_BATCH_HANDLER_JOB;
const due = (id: string, overrides: Partial<RowView> = {}) => row({ id, name: NAME, ...overrides });
const leased = (id: string, workerId = 'w1', attempt = 1, overrides: Partial<RowView> = {}) => running({ id, name: NAME, workerId, attempt, ...overrides });

/** The store leases attempt `attempt` of `id` to `workerId`. */
const claim = (id: string, workerId = 'w1', attempt = 1, from: RowView = due(id, { attempt: attempt - 1 })): SimEvent[] => [
  write(from, leased(id, workerId, attempt)),
  call('jobClaim', worker(workerId), [{ workerId }], []),
];
type Held = { readonly jobId: string; readonly attempt?: number; readonly name?: string };
const start = (callId: string, jobs: readonly (string | Held)[], options: { workerId?: string; size?: number; name?: string } = {}): SimEvent => ({
  type: 'batch_call',
  phase: 'start',
  at: T0,
  workerId: options.workerId ?? 'w1',
  call: callId,
  name: options.name ?? NAME,
  size: options.size ?? 3,
  jobs: jobs.map((job) => (typeof job === 'string' ? { jobId: job, attempt: 1, name: NAME } : { attempt: 1, name: NAME, ...job })),
});
const end = (callId: string, failed: readonly string[] = [], threw = false, workerId = 'w1'): SimEvent => ({ type: 'batch_call', phase: 'end', at: T0 + 10, workerId, call: callId, failed, threw });
/** `workerId` reports `kind` for attempt 1 of `id`, and the store writes `state` (nothing when refused as stale). */
const report = (id: string, kind: 'succeeded' | 'failed' | 'dead_lettered', state: RowView['state'] | 'stale', workerId = 'w1', attempt = 1): SimEvent[] => [
  ...(state === 'stale' ? [] : [write(leased(id, workerId, attempt), due(id, { state, attempt, lastError: kind === 'succeeded' ? null : 'Error: planned failure' }), T0 + 20)]),
  call('jobCompleteMany', worker(workerId), { workerId, outcomes: [{ jobId: id, attempt, kind }] }, [{ jobId: id, attempt, status: state === 'stale' ? 'stale' : 'applied' }], T0 + 20),
];

function judge(events: readonly SimEvent[]): BatchHandlerOracle {
  const oracle = new BatchHandlerOracle();
  feed(oracle, events);
  return oracle;
}
const examples = (oracle: BatchHandlerOracle) => oracle.report().examples;

describe('batch handler calls oracle', () => {
  it('accepts a call whose failed job is retried alone while the rest succeed, and a thrown call whose jobs all fail', () => {
    const oracle = judge([
      ...claim('a'),
      ...claim('b'),
      ...claim('c'),
      start('w1#1', ['a', 'b', 'c']),
      end('w1#1', ['b']),
      ...report('a', 'succeeded', 'succeeded'),
      ...report('b', 'failed', 'scheduled'),
      ...report('c', 'succeeded', 'succeeded'),
      ...claim('d', 'w2'),
      ...claim('e', 'w2'),
      start('w2#1', ['d', 'e'], { workerId: 'w2' }),
      end('w2#1', ['d'], true, 'w2'),
      ...report('d', 'dead_lettered', 'dead_lettered', 'w2'),
      ...report('e', 'failed', 'scheduled', 'w2'),
    ]);
    expect(oracle.report()).toMatchObject({ violations: 0 });
    expect(oracle).toMatchObject({ sharedCalls: 2, failedAlone: 1, thrownFailures: 1, lostBeforeCall: 0 });
  });

  it('counts a call of more jobs than its handler takes, or of none', () => {
    expect(examples(judge([...claim('a'), ...claim('b'), start('w1#1', ['a', 'b'], { size: 1 })]))).toEqual([expect.stringContaining('held 2 jobs; its handler takes 1 to 1')]);
    expect(judge([start('w1#1', [])]).report().violations).toBe(1);
  });

  it('counts a job of another wire name, a call for a name no batch handler has, and a job held twice', () => {
    const other = [write(row({ id: 'x' }), running({ id: 'x' })), call('jobClaim', worker('w1'), [{}], [])];
    expect(examples(judge([...other, ...claim('a'), start('w1#1', ['a', { jobId: 'x' }])]))).toEqual([expect.stringContaining('held x, of wire name sim.work')]);
    expect(judge([...claim('a'), start('w1#1', ['a'], { name: 'sim.work' })]).report().violations).toBeGreaterThan(0);
    expect(examples(judge([...claim('a'), start('w1#1', ['a', 'a'])]))).toEqual([expect.stringContaining('held a twice')]);
  });

  it("counts a job whose attempt no claim leased to the call's node, and a lease two calls ran", () => {
    expect(examples(judge([...claim('a', 'w2'), start('w1#1', ['a'])]))).toEqual([expect.stringContaining('which no claim leased to w1 (the store has it running, attempt 1 under w2)')]);
    expect(judge([...claim('a'), start('w1#1', [{ jobId: 'a', attempt: 2 }])]).report().violations).toBe(1);
    expect(examples(judge([...claim('a'), start('w1#1', ['a']), end('w1#1'), start('w1#2', ['a'])]))).toEqual([expect.stringContaining('which an earlier call on w1 had run')]);
  });

  it('accepts a job whose lease was lost between its claim and its call, counting it, and a report the store then refused', () => {
    const reclaimed = [write(leased('a'), leased('a', 'w2', 2)), call('jobClaim', worker('w2'), [{}], [])];
    const oracle = judge([...claim('a'), ...reclaimed, start('w1#1', ['a']), end('w1#1'), ...report('a', 'succeeded', 'stale')]);
    expect(oracle.report().violations).toBe(0);
    expect(oracle.lostBeforeCall).toBe(1);
  });

  it('counts a failed job that ended succeeded, and a job of a thrown call that did', () => {
    expect(examples(judge([...claim('a'), ...claim('b'), start('w1#1', ['a', 'b']), end('w1#1', ['a']), ...report('a', 'succeeded', 'succeeded')]))).toEqual([
      expect.stringContaining("w1's succeeded report of a attempt 1 ended it succeeded, but call w1#1 failed it"),
    ]);
    expect(examples(judge([...claim('a'), start('w1#1', ['a']), end('w1#1', [], true), ...report('a', 'succeeded', 'succeeded')]))).toEqual([expect.stringContaining('but call w1#1 threw')]);
  });

  it("counts a job the handler did not fail, in a call that returned, recorded failed: one failure spread to its call's other jobs", () => {
    const oracle = judge([...claim('a'), ...claim('b'), start('w1#1', ['a', 'b']), end('w1#1', ['a']), ...report('a', 'failed', 'scheduled'), ...report('b', 'failed', 'scheduled')]);
    expect(examples(oracle)).toEqual([expect.stringContaining("w1's failed report of b attempt 1 left it scheduled (Error: planned failure), but call w1#1 returned without failing it")]);
    // Dead-lettered, or cancelled by the failure of a cancel-requested job, is no better.
    expect(judge([...claim('b'), start('w1#1', ['b']), end('w1#1'), ...report('b', 'failed', 'cancelled')]).report().violations).toBe(1);
  });

  it('counts an outcome applied for a lease no call ran, or before its call ended', () => {
    expect(examples(judge([...claim('a'), ...report('a', 'succeeded', 'succeeded')]))).toEqual([expect.stringContaining('no call of the batch handler ran that attempt')]);
    expect(examples(judge([...claim('a'), start('w1#1', ['a']), ...report('a', 'succeeded', 'succeeded')]))).toEqual([expect.stringContaining('before its call w1#1 ended')]);
  });

  it('leaves jobs of other wire names, and the writes of other calls, alone', () => {
    const plain = [write(row({ id: 'p' }), running({ id: 'p' })), call('jobClaim', worker('w1'), [{}], []), write(running({ id: 'p' }), row({ id: 'p', state: 'succeeded', attempt: 1 })), call('jobCompleteMany', worker('w1'), { workerId: 'w1', outcomes: [{ jobId: 'p', attempt: 1, kind: 'succeeded' }] })];
    const swept = [...claim('a'), write(leased('a'), due('a', { state: 'dead_lettered', attempt: 1 })), call('jobExpireLeases', { kind: 'operator' }, [{}], [])];
    expect(judge([...plain, ...swept]).report().violations).toBe(0);
  });
});

describe('batch handler calls oracle in simulated runs', () => {
  // A few seeds of one base whose workload has batch handler jobs (two in five do) and no hot key
  // (the costliest backlog): the CI seed batches (seeds-a, seeds-b) run this oracle on 420 more.
  const seeds = Array.from({ length: 40 }, (_, i) => batchSeed(0xba7c_4a4dn, i))
    .filter((seed) => {
      const { workload } = deriveSettings(seed);
      return workload.batchHandled > 0 && workload.hotJobs === 0;
    })
    .slice(0, 5);

  it('counts nothing on seeds whose calls share jobs, fail some alone and throw', async () => {
    const reach = { sharedCalls: 0, failedAlone: 0, thrownFailures: 0 };
    for (const seed of seeds) {
      const result = await runSimulation(seed);
      const tripped = result.oracles.filter((o) => o.violations > 0).map((o) => `${o.name}: ${o.examples[0]}`);
      expect({ seed: `0x${seed.toString(16)}`, tripped }).toEqual({ seed: `0x${seed.toString(16)}`, tripped: [] });
      reach.sharedCalls += result.coverage.batchHandlerCalls;
      reach.failedAlone += result.coverage.batchHandlerFailedAlone;
      reach.thrownFailures += result.coverage.batchHandlerThrows;
    }
    expect(seeds).toHaveLength(5);
    expect(reach.sharedCalls).toBeGreaterThan(0);
    expect(reach.failedAlone).toBeGreaterThan(0);
    expect(reach.thrownFailures).toBeGreaterThan(0);
  }, 300_000);
});
