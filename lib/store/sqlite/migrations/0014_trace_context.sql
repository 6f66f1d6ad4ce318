-- The W3C trace context a job carries from its producer to every attempt; null without tracing.
ALTER TABLE {{jobs}} ADD COLUMN traceparent TEXT;
ALTER TABLE {{jobs}} ADD COLUMN tracestate TEXT;
