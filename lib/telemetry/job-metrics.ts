import type { Attributes, Counter, Histogram, Meter } from '@opentelemetry/api';
import type { AttemptStartedEvent, LeaseLostEvent, SettledEvent } from '../worker/index.js';
import type { Otel } from './otel-api.js';
import { ATTR, MESSAGING_SYSTEM, METRIC } from './semconv.js';

/** Seconds, the unit OpenTelemetry's duration histograms use; buckets from 5 ms to 10 minutes. */
const SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

/**
 * The counters and histograms, fed by the node's events and the client's enqueues. Each sample
 * carries the queue and the wire name, both bounded sets an application chooses; never an id, so
 * the number of series stays what the application's job catalogue makes it.
 */
export class JobMetrics {
  private readonly sent: Counter;
  private readonly consumed: Counter;
  private readonly processDuration: Histogram;
  private readonly waitDuration: Histogram;
  private readonly succeeded: Counter;
  private readonly retried: Counter;
  private readonly snoozed: Counter;
  private readonly deadLettered: Counter;
  private readonly quarantined: Counter;
  private readonly cancelled: Counter;
  private readonly stale: Counter;
  private readonly leasesLost: Counter;

  constructor(
    api: Otel,
    readonly meter: Meter,
  ) {
    const counter = (name: string, description: string) => meter.createCounter(name, { description, unit: '{job}', valueType: api.ValueType.INT });
    const seconds = (name: string, description: string) =>
      meter.createHistogram(name, { description, unit: 's', advice: { explicitBucketBoundaries: SECONDS_BUCKETS } });
    this.sent = meter.createCounter(METRIC.sent, { description: 'Jobs enqueued through the client.', unit: '{message}', valueType: api.ValueType.INT });
    this.consumed = meter.createCounter(METRIC.consumed, { description: 'Attempts started by this node.', unit: '{message}', valueType: api.ValueType.INT });
    this.processDuration = seconds(METRIC.processDuration, "An attempt's run on this node, from its start until its handler returned (and its transaction committed).");
    this.waitDuration = seconds(METRIC.waitDuration, 'How long a job waited from its run time to the start of an attempt.');
    this.succeeded = counter(METRIC.succeeded, 'Attempts whose success this node recorded.');
    this.retried = counter(METRIC.retried, 'Failed attempts this node recorded that left the job scheduled for a retry.');
    this.snoozed = counter(METRIC.snoozed, 'Attempts this node recorded that snoozed their job (ctx.snooze): it runs again later without spending its retry budget.');
    this.deadLettered = counter(METRIC.deadLettered, 'Attempts this node recorded that dead-lettered their job.');
    this.quarantined = counter(METRIC.quarantined, 'Attempts this node recorded that quarantined their job.');
    this.cancelled = counter(METRIC.cancelled, 'Attempts this node recorded that ended in a cancel an operator asked for.');
    this.stale = counter(METRIC.staleOutcomes, "Outcomes the lease fence refused: the lease was no longer this node's.");
    this.leasesLost = counter(METRIC.leasesLost, 'Leases this node learned it had lost while their attempt ran.');
  }

  /** One enqueue call: `count` jobs of `queue`, or none if it failed (then counted with `error.type`). */
  enqueued(queue: string, name: string | undefined, count: number, errorType?: string): void {
    this.sent.add(count, {
      [ATTR.messagingSystem]: MESSAGING_SYSTEM,
      [ATTR.operationName]: 'send',
      [ATTR.destination]: queue,
      ...(name === undefined ? {} : { [ATTR.jobName]: name }),
      ...(errorType === undefined ? {} : { [ATTR.errorType]: errorType }),
    });
  }

  attemptStarted(event: AttemptStartedEvent): void {
    const attributes = this.attributes(event);
    this.consumed.add(1, { ...attributes, [ATTR.operationName]: 'process' });
    this.waitDuration.record(event.waitMs / 1000, attributes);
  }

  settled(event: SettledEvent): void {
    const attributes = this.attributes(event);
    this.processDuration.record(event.durationMs / 1000, {
      ...attributes,
      [ATTR.operationName]: 'process',
      [ATTR.outcomeKind]: event.kind,
      [ATTR.outcome]: event.status,
      ...(event.errorType === undefined ? {} : { [ATTR.errorType]: event.errorType }),
    });
    if (event.status === 'stale') this.stale.add(1, attributes);
    if (event.status !== 'applied') return;
    const counter = {
      succeeded: this.succeeded,
      scheduled: event.kind === 'snoozed' ? this.snoozed : this.retried,
      dead_lettered: this.deadLettered,
      quarantined: this.quarantined,
      cancelled: this.cancelled,
    }[event.state as string];
    counter?.add(1, attributes);
  }

  leaseLost(event: LeaseLostEvent): void {
    this.leasesLost.add(1, { [ATTR.messagingSystem]: MESSAGING_SYSTEM, [ATTR.leaseReason]: event.reason });
  }

  private attributes(event: { readonly queue: string; readonly name: string }): Attributes {
    return { [ATTR.messagingSystem]: MESSAGING_SYSTEM, [ATTR.destination]: event.queue, [ATTR.jobName]: event.name };
  }
}
