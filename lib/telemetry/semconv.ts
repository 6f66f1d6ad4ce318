/**
 * The names spans and instruments carry. The OpenTelemetry messaging conventions are still in
 * development, so the names we take from them are constants of our own: a rename upstream is one
 * line here, and a dashboard built on today's names keeps working until we choose to move.
 */
export const ATTR = {
  messagingSystem: 'messaging.system',
  operationType: 'messaging.operation.type',
  operationName: 'messaging.operation.name',
  destination: 'messaging.destination.name',
  messageId: 'messaging.message.id',
  batchCount: 'messaging.batch.message_count',
  errorType: 'error.type',
  jobName: 'durable_scheduler.job.name',
  attempt: 'durable_scheduler.job.attempt',
  maxAttempts: 'durable_scheduler.job.max_attempts',
  occurrenceId: 'durable_scheduler.job.occurrence_id',
  scheduleId: 'durable_scheduler.schedule.id',
  workerId: 'durable_scheduler.worker.id',
  /** `applied` (the fenced write took it), `stale` (the fence refused it) or `dropped` (never sent). */
  outcome: 'durable_scheduler.outcome',
  /** What the attempt's outcome asked for: succeeded, failed, dead_lettered, snoozed, quarantined. */
  outcomeKind: 'durable_scheduler.outcome.kind',
  /** The job's state after an applied outcome: succeeded, scheduled (a retry), dead_lettered, ... */
  state: 'durable_scheduler.job.state',
  /** On a link: `parent` for a dependant's link to a parent's enqueue. */
  linkKind: 'durable_scheduler.link.kind',
  /** How a lease was lost: `lease_lost` or `lease_expired`. */
  leaseReason: 'durable_scheduler.lease.reason',
} as const;

/** `messaging.system` on every span and sample. */
export const MESSAGING_SYSTEM = 'durable_scheduler';

/** The span event an attempt's span gets when the fence refused its outcome. */
export const STALE_OUTCOME_EVENT = 'durable_scheduler.outcome.stale';
/** The span event an attempt's span gets when this node learned its lease was gone. */
export const LEASE_LOST_EVENT = 'durable_scheduler.lease.lost';

/** The instruments, by name (docs/observability.md#metrics describes each). */
export const METRIC = {
  sent: 'messaging.client.sent.messages',
  consumed: 'messaging.client.consumed.messages',
  processDuration: 'messaging.process.duration',
  waitDuration: 'durable_scheduler.job.wait.duration',
  succeeded: 'durable_scheduler.jobs.succeeded',
  retried: 'durable_scheduler.jobs.retried',
  snoozed: 'durable_scheduler.jobs.snoozed',
  deadLettered: 'durable_scheduler.jobs.dead_lettered',
  quarantined: 'durable_scheduler.jobs.quarantined',
  cancelled: 'durable_scheduler.jobs.cancelled',
  staleOutcomes: 'durable_scheduler.outcomes.stale',
  leasesLost: 'durable_scheduler.leases.lost',
  running: 'durable_scheduler.jobs.running',
  due: 'durable_scheduler.jobs.due',
  oldestDueAge: 'durable_scheduler.jobs.oldest_due.age',
  deadLetterCount: 'durable_scheduler.jobs.dead_letter.count',
} as const;

/** The tracer's and the meter's instrumentation scope. */
export const SCOPE = 'nestjs-durable-scheduler';

/** The maintenance task whose lease says which node reads the cluster's gauges. */
export const GAUGE_TASK = 'telemetry-gauges';
