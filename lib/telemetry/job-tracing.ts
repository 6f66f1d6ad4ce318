import type { Attributes, Span } from '@opentelemetry/api';
import { parseTraceparent, type TraceContext } from '../core/index.js';
import type { JobStore } from '../store/index.js';
import { describeError, packageVersion, type AttemptHook, type ErrorLogDetail, type LeaseLostEvent, type SettledEvent } from '../worker/index.js';
import type { Otel } from './otel-api.js';
import { sendCount, type SendInfo } from './send-info.js';
import { ATTR, LEASE_LOST_EVENT, MESSAGING_SYSTEM, SCOPE, STALE_OUTCOME_EVENT } from './semconv.js';
import { contextFrom, spanContextFrom, traceContextOf } from './trace-carrier.js';

/** The most parents one dependant's span links to (a span's links are capped at 128 by default). */
export const MAX_PARENT_LINKS = 32;


/**
 * Spans for the two ends of a job. `send {queue}` (PRODUCER) wraps an enqueue and hands its context
 * to the write, which stores it with the job; `process {queue}` (CONSUMER) wraps each attempt, as
 * the child of that stored context, and stays open until the attempt's outcome is applied, refused
 * as stale, or dropped, which the node's `settled` event says. With no SDK registered every span is
 * a no-op: nothing is stored with the job and the attempt runs as it would without.
 */
export class JobTracing {
  /** Attempts whose span is open, by `${jobId}:${attempt}`, until they settle. */
  private readonly open = new Map<string, Span>();
  /** Spans already marked as failed with the handler's error, so the settle does not overwrite it. */
  private readonly failed = new WeakSet<Span>();

  constructor(
    private readonly api: Otel,
    private readonly errorDetail: ErrorLogDetail,
    /** Reads a dependant's parents, for its span's links. */
    private readonly store: Pick<JobStore, 'jobEdges' | 'scheduleGet'>,
  ) {}

  private tracer() {
    // Asked per span, not kept: a host (or a test) may replace its provider while the app runs.
    return this.api.trace.getTracer(SCOPE, packageVersion());
  }

  /** Runs `write` inside a `send` span, handing it the trace context to store with the jobs. */
  async send<T>(info: SendInfo, write: (trace: TraceContext | undefined) => Promise<T>, idOf: (result: T) => string | undefined): Promise<T> {
    const { api } = this;
    const count = sendCount(info);
    // Named by its queue when the call writes to one, as the conventions name a span by its destination.
    const queue = info.queues.size === 1 ? [...info.queues.keys()][0]! : undefined;
    const attributes: Attributes = {
      [ATTR.messagingSystem]: MESSAGING_SYSTEM,
      [ATTR.operationType]: 'send',
      [ATTR.operationName]: 'send',
      ...(queue === undefined ? {} : { [ATTR.destination]: queue }),
      ...(info.name === undefined ? {} : { [ATTR.jobName]: info.name }),
      ...(count === 1 ? {} : { [ATTR.batchCount]: count }),
    };
    const span = this.tracer().startSpan(queue === undefined ? 'send' : `send ${queue}`, { kind: api.SpanKind.PRODUCER, attributes });
    const spanContext = span.spanContext();
    // No SDK: the span is the invalid no-op one, and the job is written with no context at all.
    if (!api.isSpanContextValid(spanContext)) {
      span.end();
      return write(undefined);
    }
    try {
      const result = await api.context.with(api.trace.setSpan(api.context.active(), span), () => write(traceContextOf(spanContext)));
      const id = idOf(result);
      if (id !== undefined) span.setAttribute(ATTR.messageId, id);
      return result;
    } catch (error) {
      this.fail(span, error);
      throw error;
    } finally {
      span.end();
    }
  }

  /** The attempt hook: opens the attempt's `process` span and runs the handler inside it. */
  readonly hook: AttemptHook = async (attempt, next) => {
    const { api } = this;
    const { job } = attempt;
    const parent = contextFrom(api, job.traceContext);
    const span = this.tracer().startSpan(
      `process ${job.queue}`,
      {
        kind: api.SpanKind.CONSUMER,
        attributes: {
          [ATTR.messagingSystem]: MESSAGING_SYSTEM,
          [ATTR.operationType]: 'process',
          [ATTR.operationName]: 'process',
          [ATTR.destination]: job.queue,
          [ATTR.messageId]: job.id,
          [ATTR.jobName]: job.name,
          [ATTR.attempt]: job.attempt,
          [ATTR.maxAttempts]: job.maxAttempts,
          [ATTR.occurrenceId]: job.occurrenceId,
          [ATTR.workerId]: attempt.workerId,
          ...(job.scheduleId === null ? {} : { [ATTR.scheduleId]: job.scheduleId }),
        },
      },
      parent,
    );
    if (!span.isRecording()) {
      // Sampled out (or no SDK): nothing to record, but the handler still runs under the context,
      // so its own spans and outgoing calls keep the trace and its sampling decision.
      span.end();
      return api.context.with(api.trace.setSpan(parent, span), next);
    }
    this.open.set(`${job.id}:${job.attempt}`, span);
    if (job.dependencyMode !== null) await this.linkParents(span, job.id);
    if (job.scheduleId !== null) await this.linkSchedule(span, job.scheduleId);
    return api.context.with(api.trace.setSpan(parent, span), next).catch((error: unknown) => {
      this.fail(span, error);
      throw error;
    });
  };

  /**
   * Links a released dependant's span to the span that enqueued each parent, the parent of every
   * one of that parent's attempt spans, so a trace viewer leads from the dependant to the work it
   * waited for. One read of at most {@link MAX_PARENT_LINKS} edges, only for jobs that have parents
   * and only when the span records; a failed read costs the links, never the attempt.
   */
  private async linkParents(span: Span, jobId: string): Promise<void> {
    try {
      const edges = await this.store.jobEdges({ jobId, limit: MAX_PARENT_LINKS });
      const links = (edges?.parents ?? [])
        .filter((p) => p.traceContext !== null && parseTraceparent(p.traceContext.traceparent) !== null)
        .map((p) => ({ context: spanContextFrom(this.api, p.traceContext!), attributes: { [ATTR.linkKind]: 'parent', [ATTR.messageId]: p.id, [ATTR.jobName]: p.name } }));
      if (links.length > 0) span.addLinks(links);
    } catch {
      // Tracing must never fail an attempt; the span simply has no parent links.
    }
  }

  /**
   * Links a minted occurrence's span to its schedule: to the span that created or last changed the
   * schedule's definition, whose context the schedule stored. One read, only for minted jobs and
   * only when the span records. A schedule set up with no span active (a `@Job` schedule at boot)
   * has nothing to link to; the span names it by `durable_scheduler.schedule.id` either way.
   */
  private async linkSchedule(span: Span, scheduleId: string): Promise<void> {
    try {
      const schedule = await this.store.scheduleGet({ scheduleId });
      const stored = schedule?.traceContext ?? null;
      if (stored === null || parseTraceparent(stored.traceparent) === null) return;
      span.addLink({ context: spanContextFrom(this.api, stored), attributes: { [ATTR.linkKind]: 'schedule', [ATTR.scheduleId]: scheduleId } });
    } catch {
      // As with parents: the span goes without the link, the attempt is untouched.
    }
  }

  /** Ends an attempt's span with its outcome: applied (and the state it led to), stale, or dropped. */
  settled(event: SettledEvent): void {
    const span = this.take(`${event.jobId}:${event.attempt}`);
    if (span === undefined) return;
    span.setAttributes({ [ATTR.outcome]: event.status, [ATTR.outcomeKind]: event.kind, ...(event.state === undefined ? {} : { [ATTR.state]: event.state }) });
    if (event.status === 'stale') {
      // The fence refused it: another worker holds the job now, and this attempt's result counts for nothing.
      span.addEvent(STALE_OUTCOME_EVENT, { [ATTR.outcomeKind]: event.kind });
    }
    // A snooze is no failure: the attempt ended as its handler asked.
    if (event.kind !== 'succeeded' && event.kind !== 'snoozed' && !this.failed.has(span)) {
      // Failed without the hook seeing the error: a timeout (it settles while the handler still
      // runs), or a quarantine. The class is all the event carries, never the message.
      span.setAttribute(ATTR.errorType, event.errorType ?? event.kind);
      span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: event.errorType ?? event.kind });
    }
    span.end();
  }

  /** Marks an open attempt whose lease this node lost; the attempt settles (and its span ends) after. */
  leaseLost(event: LeaseLostEvent): void {
    this.open.get(`${event.jobId}:${event.attempt}`)?.addEvent(LEASE_LOST_EVENT, { [ATTR.leaseReason]: event.reason });
  }

  /** The node stopped: spans of attempts it gave up on end now, saying so. */
  abandonAll(): void {
    for (const [key, span] of this.open) {
      this.open.delete(key);
      span.setAttribute(ATTR.outcome, 'abandoned');
      span.end();
    }
  }

  private take(key: string): Span | undefined {
    const span = this.open.get(key);
    this.open.delete(key);
    return span;
  }

  private fail(span: Span, error: unknown): void {
    // After a timeout the span may have ended already; an ended span ignores these.
    this.failed.add(span);
    span.setAttribute(ATTR.errorType, describeError(error, 'class'));
    // As much of the error as the node's log lines carry: the class alone, unless the host chose more.
    span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: describeError(error, this.errorDetail === 'stack' ? 'message' : this.errorDetail) });
  }
}
