import type { Context, SpanContext } from '@opentelemetry/api';
import { parseTraceparent, type TraceContext } from '../core/index.js';
import type { Otel } from './otel-api.js';

/** A span's context as the W3C carrier a job stores: what a `traceparent` header would say. */
export function traceContextOf(span: SpanContext): TraceContext {
  const traceparent = `00-${span.traceId}-${span.spanId}-${(span.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
  const tracestate = span.traceState?.serialize();
  return tracestate ? { traceparent, tracestate } : { traceparent };
}

/**
 * The context whose remote parent is the stored `traceContext`, or the root context when there is
 * none (or it does not parse: a row written by hand, say). Read without the host's propagator, so
 * a host that registered none, or another format, still gets its attempts under the enqueue.
 */
export function contextFrom(api: Otel, traceContext: TraceContext | null): Context {
  if (traceContext === null) return api.ROOT_CONTEXT;
  const parsed = parseTraceparent(traceContext.traceparent);
  if (parsed === null) return api.ROOT_CONTEXT;
  return api.trace.setSpanContext(api.ROOT_CONTEXT, spanContextFrom(api, traceContext, parsed));
}

/** The stored context as a remote span context, for a parent or a link. */
export function spanContextFrom(api: Otel, traceContext: TraceContext, parsed = parseTraceparent(traceContext.traceparent)): SpanContext {
  const { traceId, spanId, flags } = parsed ?? { traceId: '', spanId: '', flags: 0 };
  return {
    traceId,
    spanId,
    traceFlags: flags & 0x01,
    isRemote: true,
    ...(traceContext.tracestate ? { traceState: api.createTraceState(traceContext.tracestate) } : {}),
  };
}
