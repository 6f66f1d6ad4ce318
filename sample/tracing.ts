/**
 * Opt-in tracing for the sample: `SAMPLE_TRACING=console npm start` prints every span to the
 * console; `SAMPLE_TRACING=file:<path>` appends them to a file as JSON lines (the tests read it).
 * This is the host's own SDK setup, the part a real app owns: the scheduler only uses the
 * OpenTelemetry API, and its spans appear because a provider is registered here, before the app
 * is created. Each HTTP request gets a SERVER span (a real app would use
 * `@opentelemetry/instrumentation-http`; this stays dependency-light), so a job's spans hang under
 * the request that enqueued it.
 */
import { appendFileSync } from 'node:fs';
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { ExportResultCode, W3CTraceContextPropagator, hrTimeToMicroseconds, type ExportResult } from '@opentelemetry/core';
import { BasicTracerProvider, ConsoleSpanExporter, SimpleSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Writes each span as one JSON line: what a collector would receive, readable by a test. */
class JsonLinesExporter implements SpanExporter {
  constructor(private readonly file: string) {}
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    const lines = spans.map((span) =>
      JSON.stringify({
        name: span.name,
        kind: span.kind,
        traceId: span.spanContext().traceId,
        spanId: span.spanContext().spanId,
        parentSpanId: span.parentSpanContext?.spanId,
        startUs: hrTimeToMicroseconds(span.startTime),
        attributes: span.attributes,
        status: span.status,
        events: span.events.map((event) => event.name),
        links: span.links.map((link) => link.context.spanId),
        pid: process.pid,
      }),
    );
    appendFileSync(this.file, lines.map((line) => `${line}\n`).join(''));
    done({ code: ExportResultCode.SUCCESS });
  }
  async shutdown(): Promise<void> {}
}

const setting = process.env.SAMPLE_TRACING;

/** True when the sample was started with tracing on. */
export const tracingEnabled = setting !== undefined && setting !== '';

if (tracingEnabled) {
  const exporter = setting!.startsWith('file:') ? new JsonLinesExporter(setting!.slice('file:'.length)) : new ConsoleSpanExporter();
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
}

/** Express middleware: a SERVER span per request, continuing a `traceparent` the caller sent. */
export function requestSpans(request: IncomingMessage, response: ServerResponse, next: () => void): void {
  const parent = propagation.extract(context.active(), request.headers);
  const path = (request.url ?? '/').split('?')[0]!;
  const method = request.method ?? 'GET';
  const span = trace.getTracer('sample').startSpan(`${method} ${path}`, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'url.path': path } }, parent);
  response.on('finish', () => {
    span.setAttribute('http.response.status_code', response.statusCode);
    if (response.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  });
  context.with(trace.setSpan(parent, span), next);
}
