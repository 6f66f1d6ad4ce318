/** The logging the worker needs; Nest's Logger satisfies it. Messages never include payloads. */
export interface SchedulerLogger {
  log(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  debug?(message: string): void;
}

/** A logger that drops every line: the default of a `WorkerNode` built without one. */
export const silentLogger: SchedulerLogger = { log() {}, warn() {}, error() {}, debug() {} };
