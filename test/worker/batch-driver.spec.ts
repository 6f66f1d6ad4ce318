import { describe, expect, it } from '@jest/globals';
import { NodeDriver, type BatchSpec, type NodeCommand } from '../../lib/worker/index.js';

// Issue 39 item 6: jobs whose handler takes many at once wait in the local queue and start
// together, up to the batch size, in one slot; each keeps its own lease.
const LEASE = 30_000;
const SPEC: BatchSpec = { key: 'index', size: 3, waitMs: 500 };
const driver = (options: { concurrency?: number; batchAhead?: number; claimAhead?: number } = {}) =>
  new NodeDriver({ concurrency: 2, claimBatchSize: 100, leaseMs: LEASE, claimAhead: 0, batchAhead: 3, ...options });
const batched = (spec: BatchSpec, ...ids: string[]) => ids.map((jobId) => ({ jobId, attempt: 1, batch: spec }));
const plain = (...ids: string[]) => ids.map((jobId) => ({ jobId, attempt: 1 }));
const only = <T extends NodeCommand['type']>(commands: NodeCommand[], type: T) => commands.filter((c): c is Extract<NodeCommand, { type: T }> => c.type === type);
const ids = (command: { jobs: readonly { jobId: string }[] }) => command.jobs.map((j) => j.jobId);

function started(d: NodeDriver): void {
  d.step({ type: 'start', now: 0 });
}

describe('NodeDriver batches (issue 39 item 6)', () => {
  it('starts a full batch at once, in claim order, in one slot, and the rest wait for waitMs', () => {
    const d = driver();
    started(d);
    const commands = d.step({ type: 'claimed', now: 10, sentAt: 10, limit: 5, jobs: batched(SPEC, 'a', 'b', 'c', 'd') });
    const calls = only(commands, 'execute_batch');
    expect(calls.map(ids)).toEqual([['a', 'b', 'c']]);
    expect(only(commands, 'execute')).toEqual([]);
    expect(d.running).toBe(1);
    expect(d.queued).toBe(1);
    // d waits for its batch to fill: a timer at its claim plus waitMs.
    expect(only(commands, 'batch_timer')).toEqual([{ type: 'batch_timer', at: 510 }]);
    expect(only(d.step({ type: 'batch_due', now: 509 }), 'execute_batch')).toEqual([]);
    expect(only(d.step({ type: 'batch_due', now: 510 }), 'execute_batch').map(ids)).toEqual([['d']]);
    expect(d.running).toBe(2);
  });

  it('a batch that is not ready does not hold back plain jobs behind it', () => {
    const d = driver();
    started(d);
    const commands = d.step({ type: 'claimed', now: 0, sentAt: 0, limit: 5, jobs: [...batched(SPEC, 'a'), ...plain('p', 'q')] });
    expect(only(commands, 'execute').map((c) => c.jobId)).toEqual(['p', 'q']);
    expect(only(commands, 'execute_batch')).toEqual([]);
    expect(d.queued).toBe(1);
  });

  it('takes one slot per call whatever its size, and waits for a slot once ready', () => {
    const d = driver({ concurrency: 1 });
    started(d);
    const first = d.step({ type: 'claimed', now: 0, sentAt: 0, limit: 4, jobs: batched(SPEC, 'a', 'b', 'c', 'd', 'e', 'f') });
    expect(only(first, 'execute_batch').map(ids)).toEqual([['a', 'b', 'c']]);
    expect(d.running).toBe(1);
    // The call's jobs settle one by one; its slot frees only with the last.
    expect(only(d.step({ type: 'attempt_settled', now: 5, jobId: 'a', attempt: 1 }), 'execute_batch')).toEqual([]);
    expect(only(d.step({ type: 'attempt_settled', now: 5, jobId: 'b', attempt: 1 }), 'execute_batch')).toEqual([]);
    const next = d.step({ type: 'attempt_settled', now: 5, jobId: 'c', attempt: 1 });
    expect(only(next, 'execute_batch').map(ids)).toEqual([['d', 'e', 'f']]);
  });

  it('keeps room in the local queue for a whole batch, and counts a call once against the held leases', () => {
    const d = driver({ concurrency: 1, batchAhead: 100 });
    started(d);
    expect(d.claimLimit()).toBe(100);
    d.step({ type: 'claimed', now: 0, sentAt: 0, limit: 100, jobs: batched({ key: 'index', size: 100, waitMs: 0 }, ...Array.from({ length: 100 }, (_, i) => `j${i}`)) });
    expect(d.running).toBe(1);
    expect(d.heldCount).toBe(100);
    // One call holds the slot: the local queue may take another batch's worth.
    expect(d.claimLimit()).toBe(100);
  });

  it('heartbeats every job of a call and aborts only the one whose lease was lost', () => {
    const d = driver();
    started(d);
    d.step({ type: 'claimed', now: 0, sentAt: 0, limit: 3, jobs: batched(SPEC, 'a', 'b', 'c') });
    const beat = only(d.step({ type: 'heartbeat_due', now: 1_000 }), 'heartbeat');
    expect(beat[0]!.leases.map((l) => l.jobId)).toEqual(['a', 'b', 'c']);
    const done = d.step({ type: 'heartbeat_done', now: 1_001, sentAt: 1_000, renewed: [{ jobId: 'a', attempt: 1, cancelRequested: false }, { jobId: 'c', attempt: 1, cancelRequested: true }], lost: [{ jobId: 'b', attempt: 1 }] });
    expect(only(done, 'abort')).toEqual([
      { type: 'abort', jobId: 'c', attempt: 1, reason: 'cancel_requested' },
      { type: 'abort', jobId: 'b', attempt: 1, reason: 'lease_lost' },
    ]);
    expect(d.mayReport('a', 1)).toBe(true);
    expect(d.mayReport('b', 1)).toBe(false);
  });

  it('a job lost while it waits for its batch is discarded and never starts', () => {
    const d = driver();
    started(d);
    d.step({ type: 'claimed', now: 0, sentAt: 0, limit: 2, jobs: batched(SPEC, 'a', 'b') });
    d.step({ type: 'heartbeat_due', now: 100 });
    const lost = d.step({ type: 'heartbeat_done', now: 101, sentAt: 100, renewed: [{ jobId: 'a', attempt: 1, cancelRequested: false }], lost: [{ jobId: 'b', attempt: 1 }] });
    expect(only(lost, 'discard').map((c) => c.jobId)).toEqual(['b']);
    expect(only(d.step({ type: 'batch_due', now: 500 }), 'execute_batch').map(ids)).toEqual([['a']]);
  });

  it('a flush starts what is held, full or not, and so does shutdown', () => {
    const d = driver();
    started(d);
    d.step({ type: 'claimed', now: 0, sentAt: 0, limit: 5, jobs: [...batched(SPEC, 'a'), ...batched({ key: 'mail', size: 10, waitMs: 1_000 }, 'm1', 'm2')] });
    expect(only(d.step({ type: 'batch_due', now: 1, flush: true }), 'execute_batch').map(ids)).toEqual([['a'], ['m1', 'm2']]);

    const e = driver();
    started(e);
    e.step({ type: 'claimed', now: 0, sentAt: 0, limit: 1, jobs: batched(SPEC, 'x') });
    // Shutdown does not wait out waitMs: the batch starts with the drain itself.
    expect(only(e.step({ type: 'drain', now: 1 }), 'execute_batch').map(ids)).toEqual([['x']]);
  });

  it('a claim that comes back during the drain is handed back, and the node still drains what it runs', () => {
    const d = driver();
    started(d);
    d.step({ type: 'claimed', now: 0, sentAt: 0, limit: 2, jobs: plain('p') });
    expect(only(d.step({ type: 'wake', now: 1 }), 'claim')).toHaveLength(1);
    d.step({ type: 'drain', now: 2 });
    expect(only(d.step({ type: 'claimed', now: 3, sentAt: 1, limit: 1, jobs: plain('q') }), 'relinquish')).toEqual([{ type: 'relinquish', leases: [{ jobId: 'q', attempt: 1 }] }]);
    expect(d.step({ type: 'relinquish_done', now: 4, leases: [{ jobId: 'q', attempt: 1 }] })).toEqual([]);
    expect(d.status).toBe('draining');
    d.step({ type: 'attempt_settled', now: 5, jobId: 'p', attempt: 1 });
    expect(d.step({ type: 'outcome_recorded', now: 6, jobId: 'p', attempt: 1 })).toEqual([{ type: 'stopped' }]);
  });

  it('counts the jobs of a call waiting for their outcome writes one by one against the bound on those writes', () => {
    const d = driver({ concurrency: 1, batchAhead: 3 });
    started(d);
    d.step({ type: 'claimed', now: 0, sentAt: 0, limit: 4, jobs: batched(SPEC, 'a', 'b', 'c') });
    expect(d.claimLimit()).toBe(3);
    for (const id of ['a', 'b', 'c']) d.step({ type: 'attempt_settled', now: 5, jobId: id, attempt: 1 });
    // Three writes pending: 2 × 1 + 3 ahead − 3 leaves two.
    expect(d.claimLimit()).toBe(2);
  });

  it('measures a call as shared by its jobs, so claiming ahead still sees quick handlers', () => {
    const d = driver({ concurrency: 1, claimAhead: 50, batchAhead: 3 });
    started(d);
    d.step({ type: 'claimed', now: 0, sentAt: 0, limit: 3, jobs: batched(SPEC, 'a', 'b', 'c') });
    d.step({ type: 'attempt_settled', now: 30, jobId: 'a', attempt: 1 });
    // 30 ms for three jobs is 10 ms each: 1 slot × 100 ms / 10 ms.
    expect(d.aheadNow()).toBe(10);
    // One sample per call: its other jobs settling later do not weigh it again.
    d.step({ type: 'attempt_settled', now: 90, jobId: 'b', attempt: 1 });
    d.step({ type: 'attempt_settled', now: 90, jobId: 'c', attempt: 1 });
    expect(d.aheadNow()).toBe(10);
  });
});

describe('NodeDriver claims (issue 39 item 6 bench)', () => {
  it('a claim that went out with no room keeps the hint and the lapsed search for the next free slot', () => {
    const d = driver({ batchAhead: 0 });
    expect(d.step({ type: 'start', now: 0 })).toEqual([{ type: 'claim', limit: 2, lapsed: true }]);
    // The room the driver saw when it asked was gone when the claim was sent: it went out as none.
    expect(d.step({ type: 'claimed', now: 1, sentAt: 1, limit: 0, jobs: [] })).toEqual([{ type: 'claim', limit: 2, lapsed: true }]);
    // Not sent again: the claim now in flight carries them.
    d.step({ type: 'claimed', now: 2, sentAt: 2, limit: 2, jobs: plain('a') });
    expect(d.running).toBe(1);
  });

  it('a claim asks for a whole batch of the largest batch handler when that is more than claimBatchSize', () => {
    const d = new NodeDriver({ concurrency: 2, claimBatchSize: 50, leaseMs: LEASE, claimAhead: 0, batchAhead: 500 });
    expect(d.step({ type: 'start', now: 0 })).toEqual([{ type: 'claim', limit: 500, lapsed: true }]);
  });
});
