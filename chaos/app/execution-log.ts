import { appendFileSync } from 'node:fs';

/**
 * The process's append-only record, outside every transaction: one JSON line per handler start and
 * end and per settled outcome. It keeps what the database cannot: executions whose transaction
 * never committed (killed, failed, stale).
 */
export class ExecutionLog {
  constructor(
    private readonly file: string,
    readonly workerId: string,
  ) {}

  append(event: Record<string, unknown>): void {
    appendFileSync(this.file, `${JSON.stringify({ ...event, w: this.workerId, t: Date.now() })}\n`);
  }
}
