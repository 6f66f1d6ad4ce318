import { describe, expect, it } from '@jest/globals';
import { NodeDriver, type NodeCommand } from '../../lib/worker/index.js';

const LEASE = 30_000;
const driver = (concurrency = 4, claimBatchSize = 32) => new NodeDriver({ concurrency, claimBatchSize, leaseMs: LEASE });
const refs = (...ids: string[]) => ids.map((jobId) => ({ jobId, attempt: 1 }));
const only = (commands: NodeCommand[], type: NodeCommand['type']) => commands.filter((c) => c.type === type);

describe('NodeDriver', () => {
  it('claims at start, never more than its free slots or its batch size', () => {
    expect(driver(4).step({ type: 'start', now: 0 })).toEqual([{ type: 'claim', limit: 4, lapsed: true }]);
    expect(driver(100, 32).step({ type: 'start', now: 0 })).toEqual([{ type: 'claim', limit: 32, lapsed: true }]);
  });

  it('runs what it claimed, and claims again at once only after a full batch', () => {
    const d = driver(4, 2);
    d.step({ type: 'start', now: 0 });
    const full = d.step({ type: 'claimed', now: 5, sentAt: 0, limit: 2, jobs: refs('a', 'b') });
    expect(full).toEqual([
      { type: 'execute', jobId: 'a', attempt: 1 },
      { type: 'execute', jobId: 'b', attempt: 1 },
      { type: 'claim', limit: 2, lapsed: false },
    ]);
    const partial = d.step({ type: 'claimed', now: 6, sentAt: 5, limit: 2, jobs: refs('c') });
    expect(partial).toEqual([{ type: 'execute', jobId: 'c', attempt: 1 }]);
    expect(d.freeSlots).toBe(1);
    // Nothing suggests more work, so a freed slot does not trigger a claim by itself...
    d.step({ type: 'attempt_settled', now: 7, jobId: 'a', attempt: 1 });
    expect(d.step({ type: 'outcome_recorded', now: 8, jobId: 'a', attempt: 1 })).toEqual([]);
    // ...but the poll timer does, sized to the two free slots.
    expect(d.step({ type: 'poll', now: 1_000 })).toEqual([{ type: 'claim', limit: 2, lapsed: true }]);
  });

  it('lets a pending claim take the slots freed before it is sent, up to the batch size, and none once draining', () => {
    const d = driver(4, 3);
    d.step({ type: 'start', now: 0 });
    d.step({ type: 'claimed', now: 1, sentAt: 0, limit: 3, jobs: refs('a', 'b') });
    // The claim asked for with two slots free...
    expect(d.step({ type: 'poll', now: 2 })).toEqual([{ type: 'claim', limit: 2, lapsed: true }]);
    expect(d.claimLimit()).toBe(2);
    // ...may take what frees up before it goes out, never more than the batch size.
    d.step({ type: 'attempt_settled', now: 3, jobId: 'a', attempt: 1 });
    expect(d.claimLimit()).toBe(3);
    d.step({ type: 'attempt_settled', now: 4, jobId: 'b', attempt: 1 });
    expect(d.claimLimit()).toBe(3);
    d.step({ type: 'drain', now: 5 });
    expect(d.claimLimit()).toBe(0);
  });

  it('keeps one claim in flight at a time and remembers a hint that arrives meanwhile', () => {
    const d = driver(4);
    d.step({ type: 'start', now: 0 });
    expect(d.step({ type: 'wake', now: 1 })).toEqual([]);
    expect(d.step({ type: 'poll', now: 2 })).toEqual([]);
    expect(d.step({ type: 'claimed', now: 3, sentAt: 0, limit: 4, jobs: [] })).toEqual([{ type: 'claim', limit: 4, lapsed: true }]);
    expect(d.step({ type: 'claimed', now: 4, sentAt: 3, limit: 4, jobs: [] })).toEqual([]);
  });

  it('does not claim while every handler slot is taken; a settled handler frees its slot before its outcome is written', () => {
    const d = driver(2, 2);
    d.step({ type: 'start', now: 0 });
    d.step({ type: 'claimed', now: 1, sentAt: 0, limit: 2, jobs: refs('a', 'b') });
    expect(d.step({ type: 'wake', now: 2 })).toEqual([]);
    // The hint is remembered; b's handler finishing frees a slot while its outcome is still being written.
    expect(d.step({ type: 'attempt_settled', now: 3, jobId: 'b', attempt: 1 })).toEqual([{ type: 'claim', limit: 1, lapsed: false }]);
    // One claim at a time: the outcome write finishing asks for nothing more while it is out.
    expect(d.step({ type: 'outcome_recorded', now: 4, jobId: 'b', attempt: 1 })).toEqual([]);
  });

  it('caps the leases waiting for their outcome write at the concurrency', () => {
    const d = driver(2, 2);
    d.step({ type: 'start', now: 0 });
    d.step({ type: 'claimed', now: 1, sentAt: 0, limit: 2, jobs: refs('a', 'b') });
    d.step({ type: 'attempt_settled', now: 2, jobId: 'a', attempt: 1 });
    d.step({ type: 'attempt_settled', now: 3, jobId: 'b', attempt: 1 });
    // Two outcomes are being written and no handler runs: a full claim of two may go out...
    expect(d.freeSlots).toBe(2);
    d.step({ type: 'claimed', now: 4, sentAt: 0, limit: 2, jobs: refs('c', 'd') });
    d.step({ type: 'attempt_settled', now: 5, jobId: 'c', attempt: 1 });
    // ...but with three outcomes waiting and one handler running, only one more lease fits.
    expect(d.freeSlots).toBe(0);
    expect(d.step({ type: 'wake', now: 6 })).toEqual([]);
    expect(d.step({ type: 'outcome_recorded', now: 7, jobId: 'a', attempt: 1 })).toEqual([{ type: 'claim', limit: 1, lapsed: false }]);
  });

  it('searches for lapsed leases at start and once per poll tick, not on the claims hints and full batches make', () => {
    const d = driver(4, 2);
    const claims = (commands: NodeCommand[]) => only(commands, 'claim');
    expect(claims(d.step({ type: 'start', now: 0 }))).toEqual([{ type: 'claim', limit: 2, lapsed: true }]);
    // A full batch and a hint each make the node claim again; neither searches.
    expect(claims(d.step({ type: 'claimed', now: 1, sentAt: 0, limit: 2, jobs: [] }))).toEqual([]);
    expect(claims(d.step({ type: 'wake', now: 2 }))).toEqual([{ type: 'claim', limit: 2, lapsed: false }]);
    expect(claims(d.step({ type: 'claimed', now: 3, sentAt: 2, limit: 2, jobs: refs('a', 'b') }))).toEqual([{ type: 'claim', limit: 2, lapsed: false }]);
    // A poll tick while every slot is taken keeps its search for the next claim, whatever asks for it.
    expect(claims(d.step({ type: 'claimed', now: 4, sentAt: 3, limit: 2, jobs: refs('c', 'd') }))).toEqual([]);
    expect(claims(d.step({ type: 'poll', now: 1_000 }))).toEqual([]);
    expect(claims(d.step({ type: 'attempt_settled', now: 1_001, jobId: 'a', attempt: 1 }))).toEqual([{ type: 'claim', limit: 1, lapsed: true }]);
    // A failed claim that carried the search hands it to the next claim; one that did not, does not.
    d.step({ type: 'claim_failed', now: 1_002, lapsed: true });
    expect(claims(d.step({ type: 'wake', now: 1_003 }))).toEqual([{ type: 'claim', limit: 1, lapsed: true }]);
    d.step({ type: 'claim_failed', now: 1_004, lapsed: true });
    d.step({ type: 'claim_failed', now: 1_005, lapsed: false });
    expect(claims(d.step({ type: 'wake', now: 1_006 }))).toEqual([{ type: 'claim', limit: 1, lapsed: true }]);
    d.step({ type: 'claim_failed', now: 1_007, lapsed: false });
    expect(claims(d.step({ type: 'wake', now: 1_008 }))).toEqual([{ type: 'claim', limit: 1, lapsed: false }]);
  });

  it('heartbeats every held lease, one heartbeat at a time', () => {
    const d = driver(4);
    d.step({ type: 'start', now: 0 });
    expect(d.step({ type: 'heartbeat_due', now: 1 })).toEqual([]);
    d.step({ type: 'claimed', now: 1, sentAt: 0, limit: 4, jobs: refs('a', 'b') });
    expect(d.step({ type: 'heartbeat_due', now: 10_000 })).toEqual([{ type: 'heartbeat', leases: refs('a', 'b') }]);
    expect(d.step({ type: 'heartbeat_due', now: 20_000 })).toEqual([]);
    expect(d.step({ type: 'heartbeat_done', now: 20_001, sentAt: 10_000, renewed: [], lost: [] })).toEqual([]);
  });

  it('aborts and forfeits an attempt whose lease the heartbeat reports lost', () => {
    const d = driver(4);
    d.step({ type: 'start', now: 0 });
    d.step({ type: 'claimed', now: 1, sentAt: 0, limit: 4, jobs: refs('a', 'b') });
    d.step({ type: 'heartbeat_due', now: 10_000 });
    const commands = d.step({
      type: 'heartbeat_done',
      now: 10_010,
      sentAt: 10_000,
      renewed: [{ jobId: 'b', attempt: 1, cancelRequested: false }],
      lost: refs('a'),
    });
    expect(commands).toEqual([{ type: 'abort', jobId: 'a', attempt: 1, reason: 'lease_lost' }]);
    expect(d.mayReport('a', 1)).toBe(false);
    expect(d.mayReport('b', 1)).toBe(true);
    // The lost lease still holds its slot until its handler settles, and is never renewed again.
    expect(d.freeSlots).toBe(2);
    expect(d.step({ type: 'heartbeat_due', now: 20_000 })).toEqual([{ type: 'heartbeat', leases: refs('b') }]);
  });

  it('aborts on a cancel request but keeps renewing the lease', () => {
    const d = driver(4);
    d.step({ type: 'start', now: 0 });
    d.step({ type: 'claimed', now: 1, sentAt: 0, limit: 4, jobs: refs('a') });
    d.step({ type: 'heartbeat_due', now: 10_000 });
    expect(d.step({ type: 'heartbeat_done', now: 10_001, sentAt: 10_000, renewed: [{ jobId: 'a', attempt: 1, cancelRequested: true }], lost: [] })).toEqual([
      { type: 'abort', jobId: 'a', attempt: 1, reason: 'cancel_requested' },
    ]);
    expect(d.mayReport('a', 1)).toBe(true);
    expect(d.step({ type: 'heartbeat_due', now: 20_000 })).toEqual([{ type: 'heartbeat', leases: refs('a') }]);
  });

  it('fences itself when renewals stop coming back: after a lease of silence the attempt is aborted and forfeited', () => {
    const d = driver(4);
    d.step({ type: 'start', now: 0 });
    d.step({ type: 'claimed', now: 100, sentAt: 100, limit: 4, jobs: refs('a') });
    d.step({ type: 'heartbeat_due', now: 10_000 });
    expect(d.step({ type: 'heartbeat_failed', now: 10_050 })).toEqual([]);
    d.step({ type: 'heartbeat_due', now: 20_000 });
    expect(d.step({ type: 'heartbeat_failed', now: 29_000 })).toEqual([]);
    expect(d.step({ type: 'heartbeat_due', now: LEASE + 100 })).toEqual([{ type: 'abort', jobId: 'a', attempt: 1, reason: 'lease_expired' }]);
    expect(d.mayReport('a', 1)).toBe(false);
  });

  it('drains: no new claims, stopped once the last outcome is recorded', () => {
    const d = driver(4);
    d.step({ type: 'start', now: 0 });
    d.step({ type: 'claimed', now: 1, sentAt: 0, limit: 4, jobs: refs('a') });
    expect(d.step({ type: 'drain', now: 2 })).toEqual([]);
    expect(d.step({ type: 'poll', now: 3 })).toEqual([]);
    d.step({ type: 'attempt_settled', now: 4, jobId: 'a', attempt: 1 });
    expect(d.step({ type: 'outcome_recorded', now: 5, jobId: 'a', attempt: 1 })).toEqual([{ type: 'stopped' }]);
    expect(d.status).toBe('stopped');
  });

  it('after the grace period aborts and hands back running attempts, but lets a reporting one finish', () => {
    const d = driver(4);
    d.step({ type: 'start', now: 0 });
    d.step({ type: 'claimed', now: 1, sentAt: 0, limit: 4, jobs: refs('slow', 'done') });
    d.step({ type: 'attempt_settled', now: 2, jobId: 'done', attempt: 1 });
    d.step({ type: 'drain', now: 3 });
    const commands = d.step({ type: 'grace_expired', now: 10_003 });
    expect(commands).toEqual([
      { type: 'abort', jobId: 'slow', attempt: 1, reason: 'shutdown' },
      { type: 'relinquish', leases: refs('slow') },
    ]);
    expect(d.step({ type: 'relinquish_done', now: 10_010, leases: refs('slow') })).toEqual([]);
    expect(d.step({ type: 'outcome_recorded', now: 10_011, jobId: 'done', attempt: 1 })).toEqual([{ type: 'stopped' }]);
  });

  it('hands back jobs a claim returns after shutdown began', () => {
    const d = driver(4);
    d.step({ type: 'start', now: 0 });
    d.step({ type: 'drain', now: 1 });
    const commands = d.step({ type: 'claimed', now: 2, sentAt: 0, limit: 4, jobs: refs('late') });
    expect(only(commands, 'execute')).toEqual([]);
    expect(only(commands, 'relinquish')).toEqual([{ type: 'relinquish', leases: refs('late') }]);
    expect(d.step({ type: 'relinquish_done', now: 3, leases: refs('late') })).toEqual([{ type: 'stopped' }]);
  });

  it('stops at once when it never started', () => {
    expect(driver().step({ type: 'drain', now: 0 })).toEqual([{ type: 'stopped' }]);
  });

  it('beats for the node registry from start to stop, one beat at a time, whether or not it holds a lease', () => {
    const d = driver(4);
    expect(d.step({ type: 'beat_due', now: 0 })).toEqual([]); // not started: nothing to register
    d.step({ type: 'start', now: 0 });
    expect(d.step({ type: 'beat_due', now: 0 })).toEqual([{ type: 'beat', running: 0 }]);
    // An idle node sends no heartbeat, but it beats on every tick once the last beat came back.
    expect(d.step({ type: 'heartbeat_due', now: 10_000 })).toEqual([]);
    expect(d.step({ type: 'beat_due', now: 10_000 })).toEqual([]); // the first is still in flight
    expect(d.step({ type: 'beat_done', now: 10_001 })).toEqual([]);
    expect(d.step({ type: 'beat_due', now: 20_000 })).toEqual([{ type: 'beat', running: 0 }]);
    d.step({ type: 'beat_failed', now: 20_001 });
    // It reports the handlers running now: a settled one whose outcome is being written no longer counts.
    d.step({ type: 'claimed', now: 20_002, sentAt: 20_002, limit: 4, jobs: refs('a', 'b') });
    d.step({ type: 'attempt_settled', now: 20_003, jobId: 'a', attempt: 1 });
    expect(d.step({ type: 'beat_due', now: 30_000 })).toEqual([{ type: 'beat', running: 1 }]);
    d.step({ type: 'beat_done', now: 30_001 });
    // Draining nodes still beat; a stopped one does not.
    d.step({ type: 'drain', now: 30_002 });
    expect(d.step({ type: 'beat_due', now: 40_000 })).toEqual([{ type: 'beat', running: 1 }]);
    d.step({ type: 'beat_done', now: 40_001 });
    d.step({ type: 'outcome_recorded', now: 40_002, jobId: 'a', attempt: 1 });
    d.step({ type: 'attempt_settled', now: 40_003, jobId: 'b', attempt: 1 });
    expect(d.step({ type: 'outcome_recorded', now: 40_004, jobId: 'b', attempt: 1 })).toEqual([{ type: 'stopped' }]);
    expect(d.step({ type: 'beat_due', now: 50_000 })).toEqual([]);
  });

  it('lets a failed beat change nothing about leases: the heartbeats and lease clocks run as without it', () => {
    const run = (beatFails: boolean) => {
      const d = driver(4);
      const out: NodeCommand[][] = [];
      d.step({ type: 'start', now: 0 });
      d.step({ type: 'claimed', now: 1, sentAt: 0, limit: 4, jobs: refs('a', 'b') });
      for (let tick = 1; tick <= 5; tick++) {
        const now = tick * 10_000;
        out.push(d.step({ type: 'beat_due', now }));
        out.push(d.step(beatFails ? { type: 'beat_failed', now: now + 1 } : { type: 'beat_done', now: now + 1 }));
        const heartbeat = d.step({ type: 'heartbeat_due', now });
        out.push(heartbeat);
        if (only(heartbeat, 'heartbeat').length > 0) {
          out.push(d.step({ type: 'heartbeat_done', now: now + 2, sentAt: now, renewed: refs('a', 'b').map((l) => ({ ...l, cancelRequested: false })), lost: [] }));
        }
      }
      return { out, leases: d.leases() };
    };
    const ok = run(false);
    const failing = run(true);
    expect(failing).toEqual(ok);
    expect(only(ok.out.flat(), 'heartbeat')).toHaveLength(5);
    expect(only(ok.out.flat(), 'abort')).toEqual([]);
  });

  it('a claim that hands back a job the node still runs at an earlier attempt: aborts that attempt, keeps its slot, and starts the new one only once it settled', () => {
    const d = new NodeDriver({ concurrency: 2, claimBatchSize: 4, leaseMs: LEASE, claimAhead: 4 });
    d.step({ type: 'start', now: 0 });
    d.step({ type: 'claimed', now: 1, sentAt: 0, limit: 2, jobs: refs('a') });
    // The store let a's lease lapse; the node's next claim gets a back, at attempt 2, with b.
    const again = d.step({ type: 'claimed', now: 2, sentAt: 1, limit: 2, jobs: [{ jobId: 'a', attempt: 2 }, { jobId: 'b', attempt: 1 }] });
    expect(again).toEqual([
      { type: 'abort', jobId: 'a', attempt: 1, reason: 'lease_lost' },
      { type: 'execute', jobId: 'b', attempt: 1 },
    ]);
    expect(d.running).toBe(2);
    expect(d.mayReport('a', 1)).toBe(false);
    // Attempt 1 still holds its slot; b settling frees one, but a's attempt 2 waits for attempt 1.
    expect(only(d.step({ type: 'attempt_settled', now: 3, jobId: 'b', attempt: 1 }), 'execute')).toEqual([]);
    expect(d.step({ type: 'attempt_settled', now: 4, jobId: 'a', attempt: 1 })).toContainEqual({ type: 'execute', jobId: 'a', attempt: 2 });
    // Attempt 1's write (dropped or stale) ends it; attempt 2 is still the one held.
    d.step({ type: 'outcome_recorded', now: 5, jobId: 'a', attempt: 1 });
    expect(d.mayReport('a', 2)).toBe(true);
    expect(d.leases().map(({ jobId, attempt, phase }) => ({ jobId, attempt, phase }))).toEqual([
      { jobId: 'a', attempt: 2, phase: 'running' },
      { jobId: 'b', attempt: 1, phase: 'reporting' },
    ]);
  });

  it('a claim that hands back a job still waiting in the local queue at an earlier attempt drops that attempt unstarted', () => {
    const d = new NodeDriver({ concurrency: 1, claimBatchSize: 4, leaseMs: LEASE, claimAhead: 4 });
    d.step({ type: 'start', now: 0 });
    d.step({ type: 'claimed', now: 1, sentAt: 0, limit: 1, jobs: refs('x') });
    d.step({ type: 'attempt_settled', now: 2, jobId: 'x', attempt: 1 });
    d.step({ type: 'outcome_recorded', now: 2, jobId: 'x', attempt: 1 });
    d.step({ type: 'claimed', now: 3, sentAt: 2, limit: 3, jobs: refs('y', 'z') });
    expect(d.queued).toBe(1);
    const again = d.step({ type: 'claimed', now: 4, sentAt: 3, limit: 3, jobs: [{ jobId: 'z', attempt: 2 }] });
    expect(again).toEqual([{ type: 'discard', jobId: 'z', attempt: 1, reason: 'lease_lost' }]);
    expect(d.queued).toBe(1);
    expect(d.step({ type: 'attempt_settled', now: 5, jobId: 'y', attempt: 1 })).toContainEqual({ type: 'execute', jobId: 'z', attempt: 2 });
  });

  it('draining waits for a superseded attempt whose code still runs', () => {
    const d = new NodeDriver({ concurrency: 2, claimBatchSize: 4, leaseMs: LEASE });
    d.step({ type: 'start', now: 0 });
    d.step({ type: 'claimed', now: 1, sentAt: 0, limit: 2, jobs: refs('a') });
    d.step({ type: 'claimed', now: 2, sentAt: 1, limit: 2, jobs: [{ jobId: 'a', attempt: 2 }] });
    d.step({ type: 'drain', now: 3 });
    expect(d.step({ type: 'attempt_settled', now: 4, jobId: 'a', attempt: 1 })).toContainEqual({ type: 'execute', jobId: 'a', attempt: 2 });
    expect(only(d.step({ type: 'outcome_recorded', now: 5, jobId: 'a', attempt: 1 }), 'stopped')).toEqual([]);
    d.step({ type: 'attempt_settled', now: 6, jobId: 'a', attempt: 2 });
    expect(d.step({ type: 'outcome_recorded', now: 7, jobId: 'a', attempt: 2 })).toEqual([{ type: 'stopped' }]);
  });

  it('a claim that comes back during the drain with a job the node still runs at an earlier attempt: aborts that attempt, hands the new one back, and stops only once the earlier one ended', () => {
    const d = new NodeDriver({ concurrency: 2, claimBatchSize: 4, leaseMs: LEASE });
    d.step({ type: 'start', now: 0 });
    d.step({ type: 'claimed', now: 1, sentAt: 0, limit: 2, jobs: refs('a') });
    expect(d.step({ type: 'poll', now: 2 })).toEqual([{ type: 'claim', limit: 1, lapsed: true }]);
    d.step({ type: 'drain', now: 3 });
    const out = d.step({ type: 'claimed', now: 4, sentAt: 2, limit: 1, jobs: [{ jobId: 'a', attempt: 2 }] });
    expect(out).toEqual([
      { type: 'abort', jobId: 'a', attempt: 1, reason: 'lease_lost' },
      { type: 'relinquish', leases: [{ jobId: 'a', attempt: 2 }] },
    ]);
    expect(d.running).toBe(1);
    expect(d.step({ type: 'relinquish_done', now: 5, leases: [{ jobId: 'a', attempt: 2 }] })).toEqual([]);
    d.step({ type: 'attempt_settled', now: 6, jobId: 'a', attempt: 1 });
    expect(d.step({ type: 'outcome_recorded', now: 7, jobId: 'a', attempt: 1 })).toEqual([{ type: 'stopped' }]);
  });

  it('a job taken back twice while both earlier attempts are unfinished keeps both: each holds what it held until it ends', () => {
    const d = new NodeDriver({ concurrency: 2, claimBatchSize: 4, leaseMs: LEASE, claimAhead: 4 });
    d.step({ type: 'start', now: 0 });
    d.step({ type: 'claimed', now: 1, sentAt: 0, limit: 2, jobs: refs('a') });
    // Attempt 1 settles; its outcome write is still in flight when attempt 2 is claimed.
    d.step({ type: 'attempt_settled', now: 2, jobId: 'a', attempt: 1 });
    expect(d.step({ type: 'claimed', now: 3, sentAt: 2, limit: 2, jobs: [{ jobId: 'a', attempt: 2 }] })).toContainEqual({ type: 'execute', jobId: 'a', attempt: 2 });
    expect(d.step({ type: 'claimed', now: 4, sentAt: 3, limit: 2, jobs: [{ jobId: 'a', attempt: 3 }] })).toEqual([{ type: 'abort', jobId: 'a', attempt: 2, reason: 'lease_lost' }]);
    expect(d.heldCount).toBe(3);
    d.step({ type: 'drain', now: 5 });
    // Attempt 1's write still counts: the node does not stop before it ended.
    d.step({ type: 'attempt_settled', now: 6, jobId: 'a', attempt: 2 });
    d.step({ type: 'outcome_recorded', now: 7, jobId: 'a', attempt: 2 });
    d.step({ type: 'attempt_settled', now: 8, jobId: 'a', attempt: 3 });
    expect(d.step({ type: 'outcome_recorded', now: 9, jobId: 'a', attempt: 3 })).toEqual([]);
    expect(d.step({ type: 'outcome_recorded', now: 10, jobId: 'a', attempt: 1 })).toEqual([{ type: 'stopped' }]);
  });
});
