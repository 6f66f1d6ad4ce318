import { freeStarts, useStart } from '../rate-window.js';
import type { DriverCompleteParams, DriverHeartbeatParams, DriverRelinquishParams } from '../checked/store-driver.js';
import type { JobRecord, LifecycleFields } from '../../core/index.js';
import { toJob, type JobRow } from '../job-row.js';
import { fairOrder, GroupTurns } from '../group-turns.js';
import type { ExpiredLease, HeartbeatResult, OutcomeResult } from '../job-store.types.js';
import { limitKeysOf, pickWithinLimits } from '../limit-room.js';
import type { CheckedClaimParams } from '../checked/store-params.js';
import { outcomeEvent } from '../outcome-event.js';
import type { MemoryLifecycle } from './memory-lifecycle.js';
import type { MemoryState } from './memory-tables.js';

/** The worker's writes: claims, heartbeats, fenced outcomes and relinquishes, and the lease sweep. */
export class MemoryLeases {
  /** Whether the last claim passed over a job a limit held back (held-wake.ts). */
  heldSeen = false;
  /** Where the next claim of each queue list takes its turn from (group-turns.ts). */
  private readonly turns = new GroupTurns();

  constructor(
    private readonly state: MemoryState,
    private readonly life: MemoryLifecycle,
  ) {}

  claim({ workerId, limit, queues, leaseMs, includeLapsed }: CheckedClaimParams): JobRecord[] {
    const { tables, clock, rules, probe } = this.state;
    const now = clock.now();
    const wanted = new Set(queues.filter((q) => !tables.pausedQueues.has(q)));
    const candidates = fairOrder(
      [...tables.jobs.values()].filter((row) => wanted.has(row.queue) && (includeLapsed || row.state !== 'running') && rules.isClaimable(row, now)),
      (row) => row,
      this.turns.after(queues),
    );
    const picked = this.withinLimits(candidates, now, limit);
    this.turns.record(queues, picked.at(-1), null);
    return picked.map((row) => {
      for (const key of limitKeysOf(row.queue, row.concurrencyKey)) {
        const window = tables.rateLimits.get(key);
        if (window) useStart(window, now);
      }
      const claimed = this.life.apply(row, { kind: 'claim', workerId, leaseMs }, now);
      tables.slotHolders.add(claimed.id);
      probe.slotTaken?.(claimed.id);
      return toJob(claimed);
    });
  }

  heartbeat({ workerId, leases, leaseMs }: DriverHeartbeatParams): HeartbeatResult {
    const { tables, clock, rules } = this.state;
    const now = clock.now();
    const renewed: HeartbeatResult['renewed'][number][] = [];
    const lost: HeartbeatResult['lost'][number][] = [];
    for (const lease of leases) {
      const row = tables.jobs.get(lease.jobId);
      const result = row && rules.transition(row, { kind: 'heartbeat', workerId, attempt: lease.attempt, leaseMs }, now);
      if (row && result?.ok) {
        // Progress rides on the renewal, so it is written exactly when the fence lets the lease be renewed.
        const fields = lease.progress === undefined ? result.next : ({ ...result.next, progress: lease.progress } as LifecycleFields);
        const next = this.life.write(row, fields, result.effects);
        renewed.push({ jobId: lease.jobId, attempt: lease.attempt, leasedUntil: new Date(next.leasedUntil!), cancelRequested: next.cancelRequested });
      } else {
        lost.push({ jobId: lease.jobId, attempt: lease.attempt });
      }
    }
    return { renewed, lost };
  }

  completeMany({ workerId, outcomes }: DriverCompleteParams): OutcomeResult[] {
    const now = this.state.clock.now();
    return outcomes.map((outcome) => this.life.fenced(outcome.jobId, outcome.attempt, outcomeEvent(workerId, outcome), now));
  }

  relinquishMany({ workerId, leases }: DriverRelinquishParams): OutcomeResult[] {
    const now = this.state.clock.now();
    return leases.map((lease) => this.life.fenced(lease.jobId, lease.attempt, { kind: 'relinquish', workerId, attempt: lease.attempt }, now));
  }

  expire({ limit }: { readonly limit: number }): ExpiredLease[] {
    const { tables, clock, rules } = this.state;
    const now = clock.now();
    const due = [...tables.jobs.values()].filter((row) => rules.needsSweep(row, now)).slice(0, limit);
    return due.map((row) => {
      const next = this.life.apply(row, { kind: 'expire' }, now);
      return { jobId: next.id, attempt: next.attempt, state: next.state };
    });
  }

  /** Keeps the claim order, dropping candidates whose queue or key is at its cap. */
  private withinLimits(candidates: readonly JobRow[], now: number, limit: number): JobRow[] {
    const { jobs, concurrencyLimits, slotHolders, rateLimits } = this.state.tables;
    this.heldSeen = false;
    if (concurrencyLimits.size === 0 && rateLimits.size === 0) return candidates.slice(0, limit);
    const rateRoom = new Map([...rateLimits].map(([key, window]) => [key, freeStarts(window, now)]));
    const keysOf = (row: JobRow) => limitKeysOf(row.queue, row.concurrencyKey);
    const running = new Map<string, number>();
    for (const row of jobs.values()) {
      if (row.state !== 'running' || row.leasedUntil === null || row.leasedUntil <= now || !slotHolders.has(row.id)) continue;
      for (const key of keysOf(row)) running.set(key, (running.get(key) ?? 0) + 1);
    }
    return pickWithinLimits(candidates, keysOf, concurrencyLimits, running, limit, rateRoom, () => (this.heldSeen = true));
  }
}
