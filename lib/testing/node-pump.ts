import type { WorkerNode } from '../worker/index.js';
import { settleTurn, type ManualTimers } from './manual-timers.js';

/**
 * Counts the attempts a node started and has not settled yet: each of them ends on its own (its
 * handler returns, its outcome is written). Built before the node starts, so it misses none.
 */
export class RunningAttempts {
  private count = 0;

  constructor(node: WorkerNode) {
    // Every started attempt settles exactly once: applied, stale or dropped.
    node.events.on('attemptStarted', () => void (this.count += 1));
    node.events.on('settled', () => void (this.count -= 1));
  }

  get size(): number {
    return this.count;
  }
}

/**
 * Drives a {@link WorkerNode} that runs on {@link ManualTimers}, one pass at a time: the node never
 * arms a real timer, so nothing happens between two passes unless the test starts it.
 */
export class NodePump {
  constructor(
    private readonly node: WorkerNode,
    private readonly timers: ManualTimers,
    private readonly running: RunningAttempts,
    /** Checked between steps: true stops a pass where it is (drain's bound on attempts). */
    private readonly halted: () => boolean = () => false,
  ) {}

  /**
   * One pass at the current instant: a claim pass and a minting pass, everything they lead to
   * (attempts, their outcome writes, the claims those free slots for, jobs those attempts enqueue),
   * then observer delivery, until nothing is left to do now.
   */
  async pass(): Promise<void> {
    this.node.poll();
    this.node.minter.poke();
    await this.settle();
    const dispatcher = this.node.dispatcher;
    while (dispatcher !== undefined && !this.halted() && (await dispatcher.runOnce()) > 0) await this.settle();
  }

  /**
   * Fires every callback due now, and waits for attempts in flight, until neither is left (jobs
   * held for a batch still filling are left held: see `SchedulerTester.drain`). An
   * attempt whose handler awaits real I/O is waited for by its own signals (its outcome write is
   * queued on the timers, or it settles), never by sleeping.
   */
  async settle(): Promise<void> {
    while (!this.halted()) {
      if (await this.timers.fireNext()) continue;
      await settleTurn();
      if (this.dueNow()) continue;
      // Jobs held for a batch that is still filling start on its timer or a flush, not by
      // themselves: with no attempt running, nothing more happens now.
      if (this.node.inFlight === 0 || this.running.size === 0) return;
      await this.progress();
    }
  }

  /**
   * Runs the node's shutdown to its end: what is due now first, then, when only later callbacks
   * are left (the shutdown grace period, the stop deadline), the next of them, moving the clock to
   * it. A test's close then never waits on a timer nobody fires.
   */
  async untilStopped(): Promise<void> {
    const stopped = () => this.node.status === 'stopped';
    while (!stopped()) {
      if (await this.timers.fireNext()) continue;
      await settleTurn();
      if (this.dueNow() || stopped()) continue;
      const next = this.timers.nextAt();
      if (next !== null) await this.timers.fireNext(next);
      else await this.progress();
    }
  }

  private dueNow(): boolean {
    const next = this.timers.nextAt();
    return next !== null && next <= this.timers.clock.now();
  }

  /** Resolves at the next sign of progress: a callback queued on the timers, an attempt settled, or the node's state changed. */
  private progress(): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        this.node.events.off('settled', onSettled);
        this.node.events.off('stateChanged', onSettled);
        this.timers.onQueued = undefined;
        resolve();
      };
      const onSettled = () => done();
      this.node.events.on('settled', onSettled);
      this.node.events.on('stateChanged', onSettled);
      this.timers.onQueued = done;
    });
  }
}
