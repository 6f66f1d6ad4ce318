-- The W3C trace context a job carries from its producer to every attempt. Both columns are null
-- for jobs enqueued without tracing, so adding them rewrites nothing.
ALTER TABLE {{jobs}}
  ADD COLUMN traceparent text,
  ADD COLUMN tracestate text;
