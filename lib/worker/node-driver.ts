import type { LeaseRef } from '../store/index.js';

/**
 * The node's decisions, without I/O: when to claim and how many, when to heartbeat, what to do
 * with a lease that is lost or lapsed, how to drain. `step(event)` returns commands; it never
 * awaits, reads a clock or starts a timer. Every event carries `now` from the caller's clock, so
 * the pump in production and the simulator on virtual time drive the same code.
 */

export interface NodeDriverConfig {
  /** Attempts this node runs at once. */
  readonly concurrency: number;
  /** Most jobs one claim asks for. */
  readonly claimBatchSize: number;
  /** The lease each claim and heartbeat asks for. */
  readonly leaseMs: number;
  /**
   * Most jobs the node holds claimed before a slot is free to run them (its local queue); 0 or
   * absent claims only for free slots. How many it actually holds follows the handlers' time: see
   * {@link CLAIM_AHEAD_HORIZON_MS}.
   */
  readonly claimAhead?: number;
  /** How far ahead, in handler time, the local queue reaches (default {@link CLAIM_AHEAD_HORIZON_MS}). */
  readonly claimAheadMs?: number;
  /**
   * The largest `size` of this node's batch handlers (0 or absent: none). The local queue always
   * has room for that many, whatever `claimAhead` says: a batch fills there before it starts.
   */
  readonly batchAhead?: number;
}

/** How a claimed job whose handler takes many jobs at once is grouped: by its wire name. */
export interface BatchSpec {
  /** Jobs with the same key run in one call: the wire name. */
  readonly key: string;
  readonly size: number;
  readonly waitMs: number;
}

/** The batch call a lease runs in, shared by the call's leases. */
export interface BatchRunRef {
  readonly id: number;
  /** How many jobs the call took. */
  readonly size: number;
  /** Its time was counted in the handlers' average (once per call). */
  noted?: boolean;
}

/** A claimed lease, with how it is batched when its handler takes many jobs at once. */
export interface ClaimedLease extends LeaseRef {
  readonly batch?: BatchSpec;
}

/**
 * By default the node claims ahead only the jobs it expects to start within this long, judged from how long
 * its handlers have taken (a moving average): with no-op handlers the whole local queue, with
 * one-second handlers at concurrency 10 one job, with slow ones none. A job waiting in the local
 * queue holds a lease another node cannot take, so it must not wait for long.
 */
export const CLAIM_AHEAD_HORIZON_MS = 100;

/** The weight of the newest handler time in the moving average. */
const DURATION_WEIGHT = 0.2;

/** Why the node aborts an attempt's signal. */
export type AbortReason = 'lease_lost' | 'lease_expired' | 'cancel_requested' | 'shutdown';

export type NodeEvent =
  | { readonly type: 'start'; readonly now: number }
  /** The poll timer fired: look for due work. */
  | { readonly type: 'poll'; readonly now: number }
  /** A wake-up hint arrived: work may be due now. */
  | { readonly type: 'wake'; readonly now: number }
  | { readonly type: 'claimed'; readonly now: number; readonly sentAt: number; readonly limit: number; readonly jobs: readonly ClaimedLease[] }
  /**
   * The batch timer fired: a batch that waited `waitMs` starts. With `flush`, every batch in the
   * local queue starts now, full or not (the testing kit's drain).
   */
  | { readonly type: 'batch_due'; readonly now: number; readonly flush?: boolean }
  | { readonly type: 'claim_failed'; readonly now: number; readonly lapsed: boolean }
  /** The handler finished; its outcome is being recorded. */
  | { readonly type: 'attempt_settled'; readonly now: number; readonly jobId: string; readonly attempt: number }
  /** The outcome write finished (applied, stale, or given up): the slot is free. */
  | { readonly type: 'outcome_recorded'; readonly now: number; readonly jobId: string; readonly attempt: number }
  | { readonly type: 'heartbeat_due'; readonly now: number }
  | {
      readonly type: 'heartbeat_done';
      readonly now: number;
      readonly sentAt: number;
      readonly renewed: readonly (LeaseRef & { readonly cancelRequested: boolean })[];
      readonly lost: readonly LeaseRef[];
    }
  | { readonly type: 'heartbeat_failed'; readonly now: number }
  /** Shutdown began: stop claiming and let running attempts finish. */
  | { readonly type: 'drain'; readonly now: number }
  /** The grace period ran out: abort and hand back what is still running. */
  | { readonly type: 'grace_expired'; readonly now: number }
  | { readonly type: 'relinquish_done'; readonly now: number; readonly leases: readonly LeaseRef[] }
  /** The registry beat is due: right after start, then on the heartbeat's timer. */
  | { readonly type: 'beat_due'; readonly now: number }
  /** The registry beat was written, or failed; either way another may be sent. */
  | { readonly type: 'beat_done'; readonly now: number }
  | { readonly type: 'beat_failed'; readonly now: number };

export type NodeCommand =
  /** `lapsed`: the claim also searches for lapsed leases (see {@link NodeDriver}). */
  | { readonly type: 'claim'; readonly limit: number; readonly lapsed: boolean }
  | { readonly type: 'execute'; readonly jobId: string; readonly attempt: number }
  /** Run these jobs of one wire name in one call of its batch handler; they share one slot. */
  | { readonly type: 'execute_batch'; readonly jobs: readonly LeaseRef[] }
  /** Send `batch_due` at this instant of the node's clock (it replaces an earlier request). */
  | { readonly type: 'batch_timer'; readonly at: number }
  | { readonly type: 'heartbeat'; readonly leases: readonly LeaseRef[] }
  | { readonly type: 'abort'; readonly jobId: string; readonly attempt: number; readonly reason: AbortReason }
  | { readonly type: 'relinquish'; readonly leases: readonly LeaseRef[] }
  /** A queued job's lease was lost or lapsed before it started: forget it (no handler runs). */
  | { readonly type: 'discard'; readonly jobId: string; readonly attempt: number; readonly reason: 'lease_lost' | 'lease_expired' }
  /** Upsert this node's registry row, with the handlers it runs now. */
  | { readonly type: 'beat'; readonly running: number }
  /** Nothing is left to wait for; the node has stopped. */
  | { readonly type: 'stopped' };

/** What the node believes about one lease it took. */
export interface HeldLease {
  readonly jobId: string;
  readonly attempt: number;
  /**
   * `queued` while it waits in the local queue for a slot (claimed ahead, no handler yet),
   * `running` while the handler runs, `reporting` while its outcome is written.
   */
  phase: 'queued' | 'running' | 'reporting';
  /** When its handler started, by the node's clock (undefined while queued). */
  startedAt?: number;
  /** When it was claimed, by the node's clock: a batch waits `waitMs` from its oldest job's claim. */
  claimedAt: number;
  /** Set for a job whose handler takes many at once. */
  readonly batch?: BatchSpec;
  /** The batch call it runs in, once started, and how many jobs that call took. */
  run?: BatchRunRef;
  /** The latest instant the lease can last, by this node's clock: the send time of the last renewal plus the lease. */
  expiresAt: number;
  /** The node knows it no longer holds the lease (lost, lapsed, or handed back); its outcome must not be reported. */
  forfeited: boolean;
  aborted: AbortReason | null;
}

export type NodeState = 'idle' | 'running' | 'draining' | 'relinquishing' | 'stopped';

export class NodeDriver {
  private state: NodeState = 'idle';
  private readonly held = new Map<string, HeldLease>();
  /**
   * Earlier attempts of jobs this node claimed again while their code still ran or their outcome
   * was being written (the store let the lease lapse, and a claim of this node took the job back),
   * by `jobId:attempt`. They are forfeited, but keep their slot until they settle: the new attempt
   * waits for that.
   */
  private readonly superseded = new Map<string, HeldLease>();
  /** The local queue: leases claimed ahead that wait for a slot, in claim order (never forfeited ones). */
  private readonly waiting = new Set<string>();
  private claimInFlight = false;
  private heartbeatInFlight = false;
  private beatInFlight = false;
  /** Something suggested there is due work (start, poll, hint, a full claim). */
  private workHinted = false;
  /**
   * The next claim also searches for lapsed leases. Set at start and by each poll tick, and again
   * if the claim that carried it failed: a lapsed lease is found within a poll interval of
   * lapsing, however often hints and full batches make the node claim in between, and those
   * claims skip a search whose cost grows with the jobs finished since the last vacuum.
   */
  private lapsedSearchDue = false;
  /** Whether the claim in flight carries the search for lapsed leases. */
  private claimLapsed = false;
  /** The moving average of handler times, from start to settled; undefined until one settled. */
  private averageRunMs: number | undefined;
  /** Numbers the batch calls this node starts. */
  private nextRunId = 1;
  /** The instant of the last `batch_timer` asked for, so one is not asked again on every step. */
  private batchTimerAt: number | undefined;

  constructor(private readonly config: NodeDriverConfig) {}

  get status(): NodeState {
    return this.state;
  }

  /** Leases the node holds: superseded attempts still running or reporting, then the held ones in claim order. */
  leases(): readonly HeldLease[] {
    return [...this.superseded.values(), ...this.held.values()];
  }

  /**
   * Jobs a claim may take now: slots no handler runs in, plus the room left in the local queue. A
   * slot is taken while a handler runs (even one whose lease is forfeited: its code is still
   * running). Once the handler settles, its lease waits for the outcome write without a slot, so
   * a claim need not wait for the write; the leases waiting that way are capped at `concurrency`
   * too, so a slow store cannot pile up outcomes without bound.
   */
  get freeSlots(): number {
    const ahead = Math.max(this.aheadNow(), this.config.batchAhead ?? 0);
    return Math.max(0, Math.min(this.config.concurrency + ahead - this.running - this.queued, 2 * this.config.concurrency + ahead - this.heldUnits()));
  }

  /**
   * Slots taken now: leases in their `running` phase, forfeited and superseded ones included
   * (their code still runs), where the jobs of one batch call take one slot together.
   */
  get running(): number {
    return this.units(true);
  }

  /**
   * Leases held, where the running jobs of one batch call count once (the call takes one slot) and
   * each job waiting for its outcome write counts on its own, so the bound on those writes holds.
   */
  private heldUnits(): number {
    if (!this.config.batchAhead && this.superseded.size === 0) return this.held.size;
    return this.units(false);
  }

  /** Counts held and superseded leases (only the running ones with `runningOnly`); one batch call counts once while it runs. */
  private units(runningOnly: boolean): number {
    let n = 0;
    let runs: Set<number> | undefined;
    const count = (lease: HeldLease) => {
      if (lease.phase !== 'running') n += runningOnly ? 0 : 1;
      else if (lease.run === undefined) n += 1;
      else (runs ??= new Set()).add(lease.run.id);
    };
    for (const lease of this.held.values()) count(lease);
    if (this.superseded.size > 0) for (const lease of this.superseded.values()) count(lease);
    return n + (runs?.size ?? 0);
  }

  /** Jobs claimed ahead that wait in the local queue for a slot. */
  get queued(): number {
    return this.waiting.size;
  }

  /**
   * How many jobs the node holds ahead now: as many as its handlers would start within
   * `claimAheadMs` at their average time, up to `claimAhead`. None before a
   * handler has settled: nothing is known of their time yet.
   */
  aheadNow(): number {
    const most = this.config.claimAhead ?? 0;
    if (most === 0 || this.averageRunMs === undefined) return 0;
    const perHorizon = (this.config.concurrency * (this.config.claimAheadMs ?? CLAIM_AHEAD_HORIZON_MS)) / Math.max(this.averageRunMs, 0.01);
    return Math.min(most, Math.floor(perHorizon));
  }

  /**
   * How many jobs a claim this driver asked for may take when it is sent: its free slots, up to
   * the batch size, or none once the node stopped running. The pump sends a claim a moment after
   * the driver asks for it (attempts that settle together then free their slots for one claim).
   * Slots only free while a claim is pending, but the local queue's reach follows the handlers'
   * average time, so a slow handler settling in between can leave no room: the claim then goes
   * out as none (`claimed` with limit 0), and the driver keeps the hint for the next free slot.
   */
  claimLimit(): number {
    return this.state === 'running' ? Math.min(this.freeSlots, this.claimSize()) : 0;
  }

  /** Leases held: attempts running, and settled attempts whose outcome is being written. */
  get heldCount(): number {
    return this.held.size + this.superseded.size;
  }

  /** True when the outcome of this attempt may still be reported (the node has not forfeited it). */
  mayReport(jobId: string, attempt: number): boolean {
    const lease = this.held.get(jobId);
    return lease !== undefined && lease.attempt === attempt && !lease.forfeited;
  }

  step(event: NodeEvent): NodeCommand[] {
    switch (event.type) {
      case 'start':
        if (this.state !== 'idle') return [];
        this.state = 'running';
        this.workHinted = true;
        this.lapsedSearchDue = true;
        return this.maybeClaim();

      case 'poll':
      case 'wake':
        this.workHinted = true;
        if (event.type === 'poll') this.lapsedSearchDue = true;
        return [...this.expireLocally(event.now), ...this.maybeClaim()];

      case 'claimed': {
        this.claimInFlight = false;
        // A full batch means more may be waiting; so does a hint that arrived during the claim. A
        // claim sent with limit 0 never reached the store: the hint (and the search for lapsed
        // leases) it was asked for still stands, for the next slot that frees.
        this.workHinted ||= event.jobs.length >= event.limit;
        if (event.limit === 0) this.lapsedSearchDue ||= this.claimLapsed;
        // Jobs this node still holds at an earlier attempt, running or not, are superseded first.
        const commands: NodeCommand[] = [];
        for (const { jobId, attempt } of event.jobs) {
          const prior = this.held.get(jobId);
          if (prior !== undefined && prior.attempt !== attempt) commands.push(...this.supersede(prior));
        }
        if (this.state !== 'running') {
          // Claimed while shutting down: hand these straight back.
          const leases = event.jobs.map(({ jobId, attempt }) => ({ jobId, attempt }));
          // Forfeited at once: being handed back, they are never started from the local queue.
          for (const lease of leases) this.held.set(lease.jobId, { ...lease, phase: 'queued', claimedAt: event.now, expiresAt: event.sentAt + this.config.leaseMs, forfeited: true, aborted: null });
          return leases.length > 0 ? [...commands, { type: 'relinquish', leases }, ...this.maybeStop()] : this.maybeStop();
        }
        for (const { jobId, attempt, batch } of event.jobs) {
          const lease: HeldLease = { jobId, attempt, phase: 'queued', claimedAt: event.now, expiresAt: event.sentAt + this.config.leaseMs, forfeited: false, aborted: null };
          this.held.set(jobId, batch === undefined ? lease : { ...lease, batch });
          this.waiting.add(jobId);
        }
        return [...commands, ...this.startQueued(event.now), ...this.maybeClaim()];
      }

      case 'batch_due':
        this.batchTimerAt = undefined;
        return this.startQueued(event.now, event.flush === true);

      case 'claim_failed':
        this.claimInFlight = false;
        this.lapsedSearchDue ||= event.lapsed;
        return this.maybeStop();

      case 'attempt_settled': {
        const lease = this.leaseOf(event.jobId, event.attempt);
        if (lease && lease.phase === 'running') {
          lease.phase = 'reporting';
          // A batch call is one sample, its time shared by its jobs: each took its part of it.
          if (lease.startedAt !== undefined && lease.run?.noted !== true) this.noteRunTime((event.now - lease.startedAt) / (lease.run?.size ?? 1));
          if (lease.run) lease.run.noted = true;
        }
        return [...this.startQueued(event.now), ...this.maybeClaim()];
      }

      case 'outcome_recorded': {
        const lease = this.held.get(event.jobId);
        if (lease && lease.attempt === event.attempt) this.held.delete(event.jobId);
        this.superseded.delete(`${event.jobId}:${event.attempt}`);
        return [...this.maybeClaim(), ...this.maybeStop()];
      }

      case 'heartbeat_due': {
        const commands = [...this.expireLocally(event.now), ...this.maybeStop()];
        if (this.heartbeatInFlight) return commands;
        const leases = [...this.held.values()].filter((l) => !l.forfeited).map(({ jobId, attempt }) => ({ jobId, attempt }));
        if (leases.length === 0) return commands;
        this.heartbeatInFlight = true;
        return [...commands, { type: 'heartbeat', leases }];
      }

      case 'heartbeat_done': {
        this.heartbeatInFlight = false;
        const commands: NodeCommand[] = [];
        for (const renewed of event.renewed) {
          const lease = this.held.get(renewed.jobId);
          if (!lease || lease.attempt !== renewed.attempt || lease.forfeited) continue;
          lease.expiresAt = event.sentAt + this.config.leaseMs;
          if (renewed.cancelRequested && lease.aborted === null) commands.push(this.abort(lease, 'cancel_requested'));
        }
        for (const lost of event.lost) {
          const lease = this.held.get(lost.jobId);
          if (!lease || lease.attempt !== lost.attempt || lease.forfeited) continue;
          commands.push(this.forfeit(lease, 'lease_lost'));
        }
        return [...commands, ...this.expireLocally(event.now), ...this.maybeClaim(), ...this.maybeStop()];
      }

      case 'heartbeat_failed':
        this.heartbeatInFlight = false;
        return this.expireLocally(event.now);

      case 'drain':
        if (this.state === 'idle') {
          this.state = 'stopped';
          return [{ type: 'stopped' }];
        }
        if (this.state !== 'running') return [];
        this.state = 'draining';
        // Batches still filling start now with what they hold: shutdown does not wait out waitMs.
        return [...this.startQueued(event.now), ...this.maybeStop()];

      case 'grace_expired': {
        if (this.state !== 'draining') return [];
        const commands: NodeCommand[] = [];
        const leases: { jobId: string; attempt: number }[] = [];
        for (const lease of this.held.values()) {
          if (lease.phase === 'reporting' || lease.forfeited) continue;
          if (lease.phase === 'running' && lease.aborted === null) commands.push(this.abort(lease, 'shutdown'));
          // A queued job never started: it goes back as a running one does (docs/worker.md, "Claiming ahead").
          if (lease.phase === 'queued') {
            lease.forfeited = true;
            this.waiting.delete(lease.jobId);
          }
          leases.push({ jobId: lease.jobId, attempt: lease.attempt });
        }
        this.state = 'relinquishing';
        if (leases.length === 0) return [...commands, ...this.maybeStop()];
        return [...commands, { type: 'relinquish', leases }];
      }

      case 'beat_due':
        // Whether or not the node holds a lease: a heartbeat goes out only for held leases, and an
        // idle node must show as alive too. One beat at a time, from start until the node stopped.
        if (this.state === 'idle' || this.state === 'stopped' || this.beatInFlight) return [];
        this.beatInFlight = true;
        return [{ type: 'beat', running: this.running }];

      case 'beat_done':
      case 'beat_failed':
        // The registry is not part of any lease: a failed beat changes nothing but the next one.
        this.beatInFlight = false;
        return [];

      case 'relinquish_done':
        // Handed back (or, if the write failed, left to lapse): either way these outcomes are no longer ours.
        for (const { jobId, attempt } of event.leases) {
          const lease = this.held.get(jobId);
          if (lease && lease.attempt === attempt) {
            this.held.delete(jobId);
            this.waiting.delete(jobId);
          }
        }
        // A claim that came back during the drain was handed back without ending it: the node still
        // drains what it holds. Only the hand-back of the grace period's end (state relinquishing)
        // leaves just the outcome writes to wait for.
        if (this.state === 'relinquishing' || this.state === 'draining') return this.maybeStop();
        return [];
    }
  }

  /** The lease of this attempt, held or superseded. */
  private leaseOf(jobId: string, attempt: number): HeldLease | undefined {
    const held = this.held.get(jobId);
    if (held?.attempt === attempt) return held;
    return this.superseded.get(`${jobId}:${attempt}`);
  }

  /**
   * A claim gave this node a job it still holds at an earlier attempt: the store let that lease
   * lapse (the node did not see it in time) and handed the job out again. The earlier attempt is
   * lost like any other lease. If it never started it is dropped; if its code still runs it is
   * aborted and keeps its slot, and the new attempt waits in the local queue until it settles, so
   * one node never runs two attempts of a job at once.
   */
  private supersede(prior: HeldLease): NodeCommand[] {
    this.held.delete(prior.jobId);
    this.waiting.delete(prior.jobId);
    if (prior.phase === 'queued') {
      if (prior.forfeited) return [];
      prior.forfeited = true;
      return [{ type: 'discard', jobId: prior.jobId, attempt: prior.attempt, reason: 'lease_lost' }];
    }
    this.superseded.set(`${prior.jobId}:${prior.attempt}`, prior);
    const wasForfeited = prior.forfeited;
    prior.forfeited = true;
    return !wasForfeited && prior.phase === 'running' ? [this.abort(prior, 'lease_lost')] : [];
  }

  private abort(lease: HeldLease, reason: AbortReason): NodeCommand {
    lease.aborted ??= reason;
    return { type: 'abort', jobId: lease.jobId, attempt: lease.attempt, reason };
  }

  /**
   * Self-fencing: a lease whose renewal has not come back within the lease time has lapsed in the
   * store too (the node measures from the send time, so it never overestimates). Abort the
   * attempt and forfeit its outcome instead of pushing toward a write the fence would refuse.
   */
  private expireLocally(now: number): NodeCommand[] {
    const commands: NodeCommand[] = [];
    for (const lease of this.held.values()) {
      if (lease.forfeited || now < lease.expiresAt) continue;
      commands.push(this.forfeit(lease, 'lease_expired'));
    }
    return commands;
  }

  /**
   * The node gives a lease up. A running attempt is aborted (its code still runs, so it keeps its
   * slot until it settles); a queued job never started, so it is dropped from the local queue.
   */
  private forfeit(lease: HeldLease, reason: 'lease_lost' | 'lease_expired'): NodeCommand {
    lease.forfeited = true;
    if (lease.phase !== 'queued') return this.abort(lease, reason);
    this.held.delete(lease.jobId);
    this.waiting.delete(lease.jobId);
    return { type: 'discard', jobId: lease.jobId, attempt: lease.attempt, reason };
  }

  /**
   * Starts queued jobs, in claim order, while a slot is free (also while draining: they are
   * leased). Jobs of a batch handler start together, up to its size, once the batch is full or its
   * oldest job has waited `waitMs`; one that is not ready yet does not hold back the jobs behind
   * it, and a timer is asked for the moment it will be.
   */
  private startQueued(now: number, flush = false): NodeCommand[] {
    if ((this.state !== 'running' && this.state !== 'draining') || this.waiting.size === 0) return [];
    // Shutdown does not wait for batches to fill: what is held runs now, or goes back.
    flush ||= this.state === 'draining';
    const commands: NodeCommand[] = [];
    let running = this.running;
    let nextDue = Infinity;
    let batchesSeen: Set<string> | undefined;
    for (const jobId of this.waiting) {
      if (running >= this.config.concurrency) break;
      const lease = this.held.get(jobId);
      if (lease === undefined || lease.phase !== 'queued' || lease.forfeited) {
        this.waiting.delete(jobId);
        continue;
      }
      if (this.stillRunning(jobId)) continue;
      if (lease.batch !== undefined) {
        batchesSeen ??= new Set();
        if (batchesSeen.has(lease.batch.key)) continue;
        batchesSeen.add(lease.batch.key);
        const started = this.startBatches(lease.batch, now, flush, this.config.concurrency - running, commands);
        running += started.runs;
        if (started.dueAt !== undefined) nextDue = Math.min(nextDue, started.dueAt);
        continue;
      }
      this.waiting.delete(jobId);
      running += 1;
      this.begin(lease, now);
      commands.push({ type: 'execute', jobId: lease.jobId, attempt: lease.attempt });
      // A cancel request that came while it waited: its handler starts with the signal aborted.
      if (lease.aborted !== null) commands.push({ type: 'abort', jobId: lease.jobId, attempt: lease.attempt, reason: lease.aborted });
    }
    if (nextDue !== Infinity && nextDue !== this.batchTimerAt) {
      this.batchTimerAt = nextDue;
      commands.push({ type: 'batch_timer', at: nextDue });
    }
    return commands;
  }

  /**
   * Starts the calls a batch key's queued jobs are ready for, at most `slots` of them, each with
   * up to `size` jobs in claim order. Returns how many started, and when the rest will be ready.
   */
  private startBatches(spec: BatchSpec, now: number, flush: boolean, slots: number, commands: NodeCommand[]): { runs: number; dueAt?: number } {
    const queued = [...this.waiting].map((id) => this.held.get(id)!).filter((l) => l.batch?.key === spec.key && l.phase === 'queued' && !l.forfeited && !this.stillRunning(l.jobId));
    let runs = 0;
    while (queued.length > 0) {
      const dueAt = queued[0]!.claimedAt + spec.waitMs;
      if (queued.length < spec.size && !flush && now < dueAt) return { runs, dueAt };
      if (runs >= slots) return { runs };
      const taken = queued.splice(0, spec.size);
      const run = { id: this.nextRunId++, size: taken.length };
      for (const lease of taken) {
        this.waiting.delete(lease.jobId);
        lease.run = run;
        this.begin(lease, now);
      }
      commands.push({ type: 'execute_batch', jobs: taken.map(({ jobId, attempt }) => ({ jobId, attempt })) });
      // Cancel requests that came while they waited: their signals start aborted.
      for (const lease of taken) if (lease.aborted !== null) commands.push({ type: 'abort', jobId: lease.jobId, attempt: lease.attempt, reason: lease.aborted });
      runs += 1;
    }
    return { runs };
  }

  /** Whether an earlier attempt of this job, superseded, still runs here: its new attempt waits for it. */
  private stillRunning(jobId: string): boolean {
    if (this.superseded.size === 0) return false;
    for (const lease of this.superseded.values()) if (lease.jobId === jobId && lease.phase === 'running') return true;
    return false;
  }

  private begin(lease: HeldLease, now: number): void {
    lease.phase = 'running';
    lease.startedAt = now;
  }

  /** The most one claim asks for: `claimBatchSize`, or a whole batch of the largest batch handler if that is more. */
  private claimSize(): number {
    return Math.max(this.config.claimBatchSize, this.config.batchAhead ?? 0);
  }

  private noteRunTime(ms: number): void {
    const sample = Math.max(0, ms);
    this.averageRunMs = this.averageRunMs === undefined ? sample : this.averageRunMs + DURATION_WEIGHT * (sample - this.averageRunMs);
  }

  private maybeClaim(): NodeCommand[] {
    if (this.state !== 'running' || this.claimInFlight || !this.workHinted) return [];
    const limit = Math.min(this.freeSlots, this.claimSize());
    if (limit <= 0) return [];
    this.claimInFlight = true;
    this.workHinted = false;
    const lapsed = this.lapsedSearchDue;
    this.lapsedSearchDue = false;
    this.claimLapsed = lapsed;
    return [{ type: 'claim', limit, lapsed }];
  }

  private maybeStop(): NodeCommand[] {
    if (this.state !== 'draining' && this.state !== 'relinquishing') return [];
    if (this.claimInFlight) return [];
    if (this.state === 'draining' && this.superseded.size > 0) return [];
    const waiting = [...this.held.values()].some((l) => (this.state === 'draining' ? true : l.phase === 'reporting' && !l.forfeited));
    if (waiting) return [];
    this.state = 'stopped';
    return [{ type: 'stopped' }];
  }
}
