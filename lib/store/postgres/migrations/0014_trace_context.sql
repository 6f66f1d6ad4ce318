-- The W3C trace context a job carries from its producer to every attempt. Both columns are null
-- for jobs enqueued without tracing, so adding them rewrites nothing.
ALTER TABLE {{jobs}}
  ADD COLUMN traceparent text,
  ADD COLUMN tracestate text;

-- A schedule keeps the context of the code that created or last changed it; each occurrence's
-- attempt span links to it.
ALTER TABLE {{schedules}}
  ADD COLUMN traceparent text,
  ADD COLUMN tracestate text;
