/**
 * Fields a log line about one job carries beside its text. Nest 12's `ConsoleLogger` takes a plain
 * object after the message as structured params: with `json: true` they land in the line's JSON
 * (under `params`, or at its root with `flattenParams`), so a log pipeline can filter on the job
 * without parsing the message. Never the payload.
 */
export interface JobLogFields {
  readonly jobId: string;
  /** The wire name. */
  readonly jobName?: string;
  readonly attempt?: number;
  readonly queue?: string;
}

/**
 * The logging the worker needs; Nest's Logger satisfies it. Messages never include payloads. A
 * line about one job passes its {@link JobLogFields} as the second argument; a logger that takes
 * only the message may ignore them, since the message names the job too.
 */
export interface SchedulerLogger {
  log(message: string, fields?: JobLogFields): void;
  warn(message: string, fields?: JobLogFields): void;
  error(message: string, fields?: JobLogFields): void;
  debug?(message: string, fields?: JobLogFields): void;
}

/** The log fields of a job as claimed. */
export function jobLogFields(job: { readonly id: string; readonly name: string; readonly attempt: number; readonly queue: string }): JobLogFields {
  return { jobId: job.id, jobName: job.name, attempt: job.attempt, queue: job.queue };
}

/** A logger that drops every line: the default of a `WorkerNode` built without one. */
export const silentLogger: SchedulerLogger = { log() {}, warn() {}, error() {}, debug() {} };
