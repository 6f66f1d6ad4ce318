-- The W3C trace context a job carries from its producer to every attempt; null without tracing.
ALTER TABLE {{jobs}} ADD COLUMN traceparent TEXT;
ALTER TABLE {{jobs}} ADD COLUMN tracestate TEXT;

-- A schedule keeps the context of the code that created or last changed it; occurrences link to it.
ALTER TABLE {{schedules}} ADD COLUMN traceparent TEXT;
ALTER TABLE {{schedules}} ADD COLUMN tracestate TEXT;
