import { describe, expect, it } from '@jest/globals';
import { NodeDriver, type NodeCommand } from '../../lib/worker/index.js';

// Issue 36 item 3: the local queue. The driver claims ahead of its free slots, as far as its
// handlers' average time says the jobs will start within claimAheadMs, and keeps those leases as
// it keeps running ones.
const LEASE = 30_000;
const driver = (options: { concurrency?: number; claimBatchSize?: number; claimAhead?: number; claimAheadMs?: number } = {}) =>
  new NodeDriver({ concurrency: 2, claimBatchSize: 100, leaseMs: LEASE, claimAhead: 4, claimAheadMs: 100, ...options });
const refs = (...ids: string[]) => ids.map((jobId) => ({ jobId, attempt: 1 }));
const only = <T extends NodeCommand['type']>(commands: NodeCommand[], type: T) => commands.filter((c): c is Extract<NodeCommand, { type: T }> => c.type === type);

/** Runs `ids` to settled and recorded, each taking `ms`, starting at `now`. */
function runThrough(d: NodeDriver, now: number, ms: number, ids: string[]): NodeCommand[] {
  const commands: NodeCommand[] = [];
  for (const id of ids) {
    commands.push(...d.step({ type: 'attempt_settled', now: now + ms, jobId: id, attempt: 1 }));
    commands.push(...d.step({ type: 'outcome_recorded', now: now + ms, jobId: id, attempt: 1 }));
  }
  return commands;
}

/**
 * A driver that has run one claim of its concurrency to the end, each handler taking `ms`, so it
 * knows its handlers' time; then a claim of `ids` comes back at now = 2 (sent at 2).
 */
function warmed(options: Parameters<typeof driver>[0], ids: string[], ms = 1): NodeDriver {
  const d = driver(options);
  const first = Array.from({ length: options?.concurrency ?? 2 }, (_, i) => `warm-${i}`);
  d.step({ type: 'start', now: 0 });
  d.step({ type: 'claimed', now: 0, sentAt: 0, limit: first.length, jobs: refs(...first) });
  runThrough(d, 0, ms, first);
  if (ids.length > 0) d.step({ type: 'claimed', now: 2, sentAt: 2, limit: 5, jobs: refs(...ids) });
  return d;
}

describe('NodeDriver claiming ahead (issue 36 item 3)', () => {
  it('claims no further than its free slots until a handler has settled: nothing is known of their time before', () => {
    const d = driver();
    expect(d.step({ type: 'start', now: 0 })).toEqual([{ type: 'claim', limit: 2, lapsed: true }]);
    expect(d.aheadNow()).toBe(0);
  });

  it('claims ahead once handlers are quick, starts the queued jobs in claim order as slots free, and never runs more than its concurrency', () => {
    const d = driver();
    d.step({ type: 'start', now: 0 });
    d.step({ type: 'claimed', now: 1, sentAt: 0, limit: 2, jobs: refs('a', 'b') });
    // Each took 1 ms: 2 slots × 100 ms / 1 ms is far more than claimAhead, so the whole local queue.
    const after = runThrough(d, 1, 1, ['a', 'b']);
    expect(d.aheadNow()).toBe(4);
    // Asked for as soon as a settled (b still ran); sized when sent: 2 slots and 4 ahead.
    expect(only(after, 'claim')).toHaveLength(1);
    expect(d.claimLimit()).toBe(6);
    const claimed = d.step({ type: 'claimed', now: 3, sentAt: 2, limit: 6, jobs: refs('c', 'd', 'e', 'f', 'g', 'h') });
    expect(only(claimed, 'execute').map((c) => c.jobId)).toEqual(['c', 'd']);
    expect(d.running).toBe(2);
    expect(d.queued).toBe(4);
    // A settled handler frees a slot: the oldest queued job starts at once, no claim needed.
    const next = d.step({ type: 'attempt_settled', now: 4, jobId: 'c', attempt: 1 });
    expect(only(next, 'execute').map((c) => c.jobId)).toEqual(['e']);
    expect(d.running).toBe(2);
  });

  it('holds ahead only what its handlers would start within claimAheadMs: slow handlers claim nothing ahead', () => {
    const d = driver({ concurrency: 2, claimAhead: 50, claimAheadMs: 100 });
    d.step({ type: 'start', now: 0 });
    d.step({ type: 'claimed', now: 0, sentAt: 0, limit: 2, jobs: refs('a', 'b') });
    runThrough(d, 0, 40, ['a', 'b']);
    // 2 slots × 100 ms / 40 ms = 5 jobs ahead.
    expect(d.aheadNow()).toBe(5);
    const slow = driver({ concurrency: 2, claimAhead: 50, claimAheadMs: 100 });
    slow.step({ type: 'start', now: 0 });
    slow.step({ type: 'claimed', now: 0, sentAt: 0, limit: 2, jobs: refs('a', 'b') });
    runThrough(slow, 0, 1_000, ['a', 'b']);
    expect(slow.aheadNow()).toBe(0);
    expect(slow.freeSlots).toBe(2);
  });

  it('heartbeats queued leases, and forgets a queued job whose lease was lost without ever starting it', () => {
    const d = warmed({}, ['c', 'd', 'e']);
    const beat = d.step({ type: 'heartbeat_due', now: 10 });
    expect(only(beat, 'heartbeat')[0]!.leases.map((l) => l.jobId)).toEqual(['c', 'd', 'e']);
    const lost = d.step({ type: 'heartbeat_done', now: 11, sentAt: 10, renewed: refs('c', 'd').map((r) => ({ ...r, cancelRequested: false })), lost: refs('e') });
    expect(only(lost, 'discard')).toEqual([{ type: 'discard', jobId: 'e', attempt: 1, reason: 'lease_lost' }]);
    expect(only(lost, 'abort')).toEqual([]);
    expect(d.queued).toBe(0);
    // The slot that frees next has nothing queued to start: e is gone.
    expect(only(d.step({ type: 'attempt_settled', now: 12, jobId: 'c', attempt: 1 }), 'execute')).toEqual([]);
  });

  it('drops a queued job whose lease lapsed by its own clock, as it fences a running one', () => {
    const d = warmed({ concurrency: 1 }, ['b', 'c']);
    const expired = d.step({ type: 'poll', now: 2 + LEASE });
    expect(only(expired, 'abort')).toEqual([{ type: 'abort', jobId: 'b', attempt: 1, reason: 'lease_expired' }]);
    expect(only(expired, 'discard')).toEqual([{ type: 'discard', jobId: 'c', attempt: 1, reason: 'lease_expired' }]);
    expect(d.mayReport('c', 1)).toBe(false);
  });

  it('starts a queued job whose cancel was requested while it waited with its signal aborted', () => {
    const d = warmed({ concurrency: 1 }, ['b', 'c']);
    d.step({ type: 'heartbeat_due', now: 3 });
    d.step({ type: 'heartbeat_done', now: 4, sentAt: 3, renewed: [{ jobId: 'b', attempt: 1, cancelRequested: false }, { jobId: 'c', attempt: 1, cancelRequested: true }], lost: [] });
    const started = d.step({ type: 'attempt_settled', now: 5, jobId: 'b', attempt: 1 });
    expect(started.filter((c) => c.type === 'execute' || c.type === 'abort')).toEqual([
      { type: 'execute', jobId: 'c', attempt: 1 },
      { type: 'abort', jobId: 'c', attempt: 1, reason: 'cancel_requested' },
    ]);
  });

  it('runs its queued jobs while draining, and hands back those still queued when the grace period ends, without aborting them', () => {
    const d = warmed({ concurrency: 1 }, ['b', 'c', 'd']);
    expect(d.step({ type: 'drain', now: 3 })).toEqual([]);
    // A slot freed while draining starts the next queued job: it is leased, and due now.
    expect(only(d.step({ type: 'attempt_settled', now: 4, jobId: 'b', attempt: 1 }), 'execute')).toEqual([{ type: 'execute', jobId: 'c', attempt: 1 }]);
    const grace = d.step({ type: 'grace_expired', now: 10 });
    expect(only(grace, 'abort')).toEqual([{ type: 'abort', jobId: 'c', attempt: 1, reason: 'shutdown' }]);
    expect(only(grace, 'relinquish')).toEqual([{ type: 'relinquish', leases: refs('c', 'd') }]);
    // Only an outcome being written holds the stop up once the leases are handed back.
    expect(d.step({ type: 'outcome_recorded', now: 11, jobId: 'b', attempt: 1 })).toEqual([{ type: 'stopped' }]);
  });

  it('claims no more than the batch size however large the local queue', () => {
    const d = driver({ concurrency: 2, claimBatchSize: 3, claimAhead: 100 });
    d.step({ type: 'start', now: 0 });
    d.step({ type: 'claimed', now: 0, sentAt: 0, limit: 2, jobs: refs('a', 'b') });
    const after = runThrough(d, 0, 1, ['a', 'b']);
    expect(only(after, 'claim')).toEqual([{ type: 'claim', limit: 3, lapsed: false }]);
    expect(d.claimLimit()).toBe(3);
  });
});

describe('NodeDriver claiming ahead while it drains (issue 36 item 3)', () => {
  it('never starts jobs a claim returned after shutdown began, though a slot frees before they are handed back', () => {
    const d = warmed({ concurrency: 1 }, ['b']);
    d.step({ type: 'heartbeat_due', now: 3 });
    const claim = only(d.step({ type: 'poll', now: 3 }), 'claim');
    expect(claim).toHaveLength(1);
    d.step({ type: 'drain', now: 4 });
    const late = d.step({ type: 'claimed', now: 5, sentAt: 3, limit: 5, jobs: refs('c', 'd') });
    expect(only(late, 'relinquish')).toEqual([{ type: 'relinquish', leases: refs('c', 'd') }]);
    // b settles and frees the slot before c and d are back: neither starts.
    expect(only(d.step({ type: 'attempt_settled', now: 6, jobId: 'b', attempt: 1 }), 'execute')).toEqual([]);
    expect(d.mayReport('c', 1)).toBe(false);
  });
});
