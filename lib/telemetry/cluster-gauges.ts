import type { BatchObservableResult, Meter, ObservableGauge } from '@opentelemetry/api';
import type { JobStore } from '../store/index.js';
import { describeError, type SchedulerLogger } from '../worker/index.js';
import type { Otel } from './otel-api.js';
import { ATTR, GAUGE_TASK, MESSAGING_SYSTEM, METRIC } from './semconv.js';


/** What one read of the cluster found, per queue. */
interface Snapshot {
  readonly at: number;
  readonly queues: readonly { readonly queue: string; readonly due: number; readonly oldestDueAgeS: number; readonly deadLetters: number }[];
}

/**
 * The gauges that cost a read of the store: due jobs and the oldest due job's age per queue, and
 * dead letters per queue. One node of the cluster reads them at a time: the one holding the
 * `telemetry-gauges` lease, which it renews with each read, and the others report nothing, so a
 * cluster of any size reads the store once per interval and a `sum` over nodes is the cluster's.
 * A collection within `intervalMs` of the last read reports that read again.
 */
export class ClusterGauges {
  private snapshot: Snapshot | undefined;
  private reading: Promise<Snapshot | undefined> | undefined;
  private failing = false;
  private closed = false;
  /** Queues this node reported at its last collection: reported as 0 once it no longer reads them. */
  private reported = new Set<string>();
  private readonly callback: (result: BatchObservableResult) => Promise<void>;
  private readonly due: ObservableGauge;
  private readonly oldest: ObservableGauge;
  private readonly deadLetters: ObservableGauge;

  constructor(
    api: Otel,
    private readonly meter: Meter,
    private readonly store: JobStore,
    private readonly options: { readonly workerId: string; readonly intervalMs: number; readonly logger: SchedulerLogger; readonly now: () => number },
  ) {
    this.due = meter.createObservableGauge(METRIC.due, { description: 'Scheduled jobs due now, per queue (at most 10,000 are counted).', unit: '{job}', valueType: api.ValueType.INT });
    this.oldest = meter.createObservableGauge(METRIC.oldestDueAge, { description: "The oldest due job's wait, per queue; 0 when none is due.", unit: 's' });
    this.deadLetters = meter.createObservableGauge(METRIC.deadLetterCount, { description: 'Dead-lettered jobs, per queue.', unit: '{job}', valueType: api.ValueType.INT });
    this.callback = (result) => this.observe(result);
    meter.addBatchObservableCallback(this.callback, [this.due, this.oldest, this.deadLetters]);
  }

  /** Stops reading: the node stopped, and the store may close. */
  close(): void {
    this.closed = true;
    this.meter.removeBatchObservableCallback(this.callback, [this.due, this.oldest, this.deadLetters]);
  }

  /**
   * Reports the last read when this node holds the lease. A queue it reported before and does not
   * report now (the lease moved to another node, a read failed, the queue emptied out) is reported
   * as 0 once: with cumulative temporality an SDK keeps exporting a gauge's last value, and a stale
   * one from a former holder would add itself to the new holder's in a `sum` over nodes.
   */
  private async observe(result: BatchObservableResult): Promise<void> {
    const snapshot = this.closed ? undefined : await this.current();
    const now = new Map((snapshot?.queues ?? []).map((q) => [q.queue, q]));
    for (const queue of new Set([...this.reported, ...now.keys()])) {
      const q = now.get(queue) ?? { due: 0, oldestDueAgeS: 0, deadLetters: 0 };
      const attributes = { [ATTR.messagingSystem]: MESSAGING_SYSTEM, [ATTR.destination]: queue };
      result.observe(this.due, q.due, attributes);
      result.observe(this.oldest, q.oldestDueAgeS, attributes);
      result.observe(this.deadLetters, q.deadLetters, attributes);
    }
    this.reported = new Set(now.keys());
  }

  /** The last read if it is fresh, else a new one if this node holds the lease; one read at a time. */
  private current(): Promise<Snapshot | undefined> {
    const fresh = this.snapshot !== undefined && this.options.now() - this.snapshot.at < this.options.intervalMs;
    if (fresh) return Promise.resolve(this.snapshot);
    this.reading ??= this.read().finally(() => (this.reading = undefined));
    return this.reading;
  }

  private async read(): Promise<Snapshot | undefined> {
    const { store, options } = this;
    try {
      // Held a little past two intervals, so a holder scraped on time keeps it and a gone one frees it soon.
      const holder = await store.maintenanceLease({ task: GAUGE_TASK, workerId: options.workerId, leaseMs: options.intervalMs * 2 + 1_000 });
      if (!holder) {
        this.snapshot = undefined;
        return undefined;
      }
      const [queues, due] = await Promise.all([store.queueList(), store.queueOldestDue()]);
      const now = due.now.getTime();
      const byQueue = new Map(due.queues.map((q) => [q.queue, q]));
      const names = new Set([...queues.map((q) => q.name), ...byQueue.keys()]);
      const counts = new Map(queues.map((q) => [q.name, q.counts]));
      this.snapshot = {
        at: options.now(),
        queues: [...names].sort().map((queue) => {
          const found = byQueue.get(queue);
          return {
            queue,
            due: found?.dueCount ?? 0,
            oldestDueAgeS: found?.oldestDueAt ? Math.max(0, now - found.oldestDueAt.getTime()) / 1000 : 0,
            deadLetters: counts.get(queue)?.dead_lettered ?? 0,
          };
        }),
      };
      this.failing = false;
      return this.snapshot;
    } catch (error) {
      if (!this.failing) options.logger.warn(`reading the cluster gauges failed (${describeError(error)}); they are skipped until a read succeeds.`);
      this.failing = true;
      return undefined;
    }
  }
}
