import type { Attributes, Span } from '@opentelemetry/api';
import type { TraceContext } from '../core/index.js';
import { describeError, packageVersion, type AttemptHook, type ErrorLogDetail, type LeaseLostEvent, type SettledEvent } from '../worker/index.js';
import type { Otel } from './otel-api.js';
import { ATTR, LEASE_LOST_EVENT, MESSAGING_SYSTEM, SCOPE, STALE_OUTCOME_EVENT } from './semconv.js';
import { contextFrom, traceContextOf } from './trace-carrier.js';

/** What one enqueue call writes, for its `send` span. */
export interface SendInfo {
  readonly queue: string;
  /** The wire name, when the call writes jobs of one name. */
  readonly name?: string;
  readonly count: number;
}

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

  constructor(
    private readonly api: Otel,
    private readonly errorDetail: ErrorLogDetail,
  ) {}

  private tracer() {
    // Asked per span, not kept: a host (or a test) may replace its provider while the app runs.
    return this.api.trace.getTracer(SCOPE, packageVersion());
  }

  /** Runs `write` inside a `send` span, handing it the trace context to store with the jobs. */
  async send<T>(info: SendInfo, write: (trace: TraceContext | undefined) => Promise<T>, idOf: (result: T) => string | undefined): Promise<T> {
    const { api } = this;
    const attributes: Attributes = {
      [ATTR.messagingSystem]: MESSAGING_SYSTEM,
      [ATTR.operationType]: 'send',
      [ATTR.operationName]: 'send',
      [ATTR.destination]: info.queue,
      ...(info.name === undefined ? {} : { [ATTR.jobName]: info.name }),
      ...(info.count === 1 ? {} : { [ATTR.batchCount]: info.count }),
    };
    const span = this.tracer().startSpan(`send ${info.queue}`, { kind: api.SpanKind.PRODUCER, attributes });
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
  readonly hook: AttemptHook = (attempt, next) => {
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
      span.end();
      return next();
    }
    this.open.set(`${job.id}:${job.attempt}`, span);
    return api.context.with(api.trace.setSpan(parent, span), next).catch((error: unknown) => {
      this.fail(span, error);
      throw error;
    });
  };

  /** Ends an attempt's span with its outcome: applied (and the state it led to), stale, or dropped. */
  settled(event: SettledEvent): void {
    const span = this.take(`${event.jobId}:${event.attempt}`);
    if (span === undefined) return;
    span.setAttributes({ [ATTR.outcome]: event.status, [ATTR.outcomeKind]: event.kind, ...(event.state === undefined ? {} : { [ATTR.state]: event.state }) });
    if (event.status === 'stale') {
      // The fence refused it: another worker holds the job now, and this attempt's result counts for nothing.
      span.addEvent(STALE_OUTCOME_EVENT, { [ATTR.outcomeKind]: event.kind });
    }
    if (event.kind === 'quarantined' || event.kind === 'dead_lettered') {
      span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: event.kind });
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
    span.setAttribute(ATTR.errorType, describeError(error, 'class'));
    // As much of the error as the node's log lines carry: the class alone, unless the host chose more.
    span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: describeError(error, this.errorDetail === 'stack' ? 'message' : this.errorDetail) });
  }
}
