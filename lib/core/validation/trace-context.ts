import { InvalidArgumentError } from '../errors/index.js';
import { showValue } from './job-fields.js';

/**
 * The W3C trace context a job carries from the code that enqueued it to every attempt: the
 * `traceparent` header's value, and `tracestate` when the producer's context had one. The store
 * keeps it as it was given; the worker reads it back as the parent of each attempt's span.
 */
export interface TraceContext {
  readonly traceparent: string;
  readonly tracestate?: string;
}

/** The trace context a store row holds as two nullable columns, or null when it holds none. */
export function storedTraceContext(traceparent: string | null | undefined, tracestate: string | null | undefined): TraceContext | null {
  if (traceparent == null) return null;
  return tracestate == null ? { traceparent } : { traceparent, tracestate };
}

/** Longest `tracestate` kept, in characters: the W3C limit of 32 members fits well inside it. */
export const MAX_TRACESTATE = 512;

// Version 00 is the only one defined; a later version keeps these four fields first, so they are all we read.
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const PRINTABLE = /^[\x20-\x7e]*$/;

/** The parts of a valid `traceparent`, or null when it is not one (W3C Trace Context, level 1). */
export function parseTraceparent(value: string): { traceId: string; spanId: string; flags: number } | null {
  const match = TRACEPARENT.exec(value);
  if (!match) return null;
  const [, version, traceId, spanId, flags] = match as unknown as [string, string, string, string, string];
  if (version === 'ff' || /^0+$/.test(traceId) || /^0+$/.test(spanId)) return null;
  return { traceId, spanId, flags: Number.parseInt(flags, 16) };
}

/**
 * Checks a trace context given at enqueue and returns it as plain data, or null when it is absent.
 * Anything else is an InvalidArgumentError naming the field: a job must never carry text that
 * would break the header it is copied into.
 */
export function checkTraceContext(value: unknown, argument = 'traceContext'): TraceContext | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidArgumentError(`${argument} must be an object { traceparent, tracestate? }, got ${showValue(value)}.`, argument);
  }
  const { traceparent, tracestate } = value as Record<string, unknown>;
  for (const key of Object.keys(value)) {
    if (key !== 'traceparent' && key !== 'tracestate') {
      throw new InvalidArgumentError(`${argument}.${key} is not a trace context field; the fields are traceparent and tracestate.`, `${argument}.${key}`);
    }
  }
  if (typeof traceparent !== 'string' || parseTraceparent(traceparent) === null) {
    throw new InvalidArgumentError(
      `${argument}.traceparent must be a W3C traceparent such as 00-<32 hex digits>-<16 hex digits>-<2 hex digits>, got ${showValue(traceparent)}.`,
      `${argument}.traceparent`,
    );
  }
  if (tracestate === undefined || tracestate === '') return { traceparent };
  if (typeof tracestate !== 'string' || tracestate.length > MAX_TRACESTATE || !PRINTABLE.test(tracestate)) {
    throw new InvalidArgumentError(
      `${argument}.tracestate must be at most ${MAX_TRACESTATE} printable ASCII characters, got ${showValue(tracestate)}.`,
      `${argument}.tracestate`,
    );
  }
  return { traceparent, tracestate };
}
